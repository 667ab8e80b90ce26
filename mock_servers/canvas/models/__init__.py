"""Canvas tables. Instants are stored as UTC strings `YYYY-MM-DDTHH:MM:SSZ` (they sort as
instants); ids are integer sequences."""

from mock_servers.canvas.models.content import (
    CanvasDiscussionEntry,
    CanvasDiscussionTopic,
    CanvasFile,
    CanvasFolder,
    CanvasModule,
    CanvasModuleItem,
    CanvasModuleProgress,
    CanvasPage,
)
from mock_servers.canvas.models.coursework import (
    CanvasAssignment,
    CanvasGrade,
    CanvasQuiz,
    CanvasQuizAnswer,
    CanvasQuizQuestion,
    CanvasQuizSubmission,
    CanvasRubric,
    CanvasRubricCriterion,
    CanvasSubmission,
    CanvasSubmissionFile,
)
from mock_servers.canvas.models.people import (
    CanvasAccount,
    CanvasAccountReport,
    CanvasCalendarEvent,
    CanvasConversation,
    CanvasConversationMessage,
    CanvasConversationParticipant,
    CanvasCourse,
    CanvasEnrollment,
    CanvasKept,
    CanvasNotification,
    CanvasUser,
)

__all__ = [
    "CanvasAccount", "CanvasAccountReport", "CanvasAssignment", "CanvasCalendarEvent",
    "CanvasConversation", "CanvasConversationMessage", "CanvasConversationParticipant",
    "CanvasCourse", "CanvasDiscussionEntry", "CanvasDiscussionTopic", "CanvasEnrollment",
    "CanvasFile", "CanvasFolder", "CanvasGrade", "CanvasKept", "CanvasModule", "CanvasModuleItem",
    "CanvasModuleProgress", "CanvasNotification", "CanvasPage", "CanvasQuiz", "CanvasQuizAnswer",
    "CanvasQuizQuestion", "CanvasQuizSubmission", "CanvasRubric", "CanvasRubricCriterion",
    "CanvasSubmission", "CanvasSubmissionFile", "CanvasUser",
]
