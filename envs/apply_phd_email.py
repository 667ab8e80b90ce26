"""apply_phd_email: read the professors' replies to my PhD applications and send each professor
who asks for them one ZIP of my application materials, built exactly as that reply specifies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loca.core.outputs import SentMail
from loca.core.script import Script, ToolRequest, Tools, call, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

FLAT = "Application_Materials_flat"
SUBJECT = "submit_material"
SUBMISSION = SentMail(subject=SUBJECT, attachment="zip")
ROOT = "Application_Materials_{name}_{student_id}"  # name: the full name without spaces
# How the professors' replies write the parts of a required tree the student must fill in.
ROOT_PLACEHOLDER = "Application_Materials_<FullNameWithoutSpaces>_<StudentID>"
LETTER_PLACEHOLDER = "Recommendation_Letter_<RecommenderLastName>.pdf"
AWARD_PLACEHOLDER = "Award_Certificate_<Letter>.pdf"
MERGED_AWARDS = "All_Awards_Certificates.pdf"
LISTING_INDENT = "    "  # one level of a reply's tree listing
# The default inbox page: a requesting reply always lies beyond the newest this many messages.
TRAP_PAGE = 20
PDF_PAGES_PER_READ = 50

INSTRUCTION = f"""\
Check my inbox (you are logged in to my mailbox) for replies to my PhD applications. For every \
professor whose latest reply asks me to submit application materials, send exactly one e-mail to \
the address that reply specifies, with subject `{SUBJECT}` and exactly one ZIP attachment. The ZIP \
must contain a single root folder `{ROOT_PLACEHOLDER}` (my details are in memory), organised \
exactly as that reply specifies (folder names and numbering, file names). Use the files in \
`{FLAT}/` unchanged, except for the renaming or merging the reply asks for: recommendation letters \
are named after the recommender who signed them (read the PDFs), and award certificates requested \
as one file are merged into one PDF, one certificate per page, ordered by award year, oldest \
first. Do not answer other e-mails (research-assistant offers, rejections, requests that were \
later withdrawn) and send nothing else. Leave `{FLAT}/` as it is: copy files out of it; working \
folders and ZIP files elsewhere in the workspace are fine. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION


def read_everything(tools: Tools, page_size: int = 50, first_page_only: bool = False) -> Script:
    """The read set: the memory graph, every inbox e-mail (all pages), the listing of the flat
    folder and the text of every PDF in it. Returns (graph, e-mails, file names, PDF text by
    file name)."""
    graph = yield from call(tools("memory", "read_graph"), {})
    [emails] = yield from paged(tools("email", "get_emails"), [{"folder": "INBOX"}], "emails",
                                "page_size", page_size, first_page_only)
    listing = yield from call(tools("filesystem", "list_directory"), {"path": FLAT})
    files = [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("[FILE] ")]
    pdfs = [name for name in files if name.lower().endswith(".pdf")]
    replies = yield [ToolRequest(tools("pdf_tools", "read_pdf_pages"), {
        "pdf_file_path": f"{FLAT}/{name}", "start_page": 1, "end_page": PDF_PAGES_PER_READ})
        for name in pdfs]
    for name, reply in zip(pdfs, replies, strict=True):
        if reply.is_error:
            raise RuntimeError(f"read_pdf_pages failed on {name}: {reply.text}")
    return graph, emails, files, {name: r.text for name, r in zip(pdfs, replies, strict=True)}


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="apply_phd_email",
    version=0,
    summary="one ZIP of application materials per professor who asks, built as each reply says",
    servers={"email": "email", "filesystem": "filesystem", "terminal": "terminal",
             "python_execute": "python_execute", "pdf_tools": "pdf_tools", "memory": "memory",
             "claim_done": "claim_done"},
    scale=Scale(primary="num_professors", lo=10, hi=10000, fine="num_other_emails"),
    instruction=instruction,
    read_set=read_set,
    outputs=(SUBMISSION,),
    tools=(("email", "get_emails"), ("email", "search_emails"), ("email", "read_email"),
           ("email", "send_email"), ("filesystem", "list_allowed_directories"),
           ("filesystem", "list_directory"), ("filesystem", "directory_tree"),
           ("filesystem", "search_files"), ("filesystem", "get_file_info"),
           ("filesystem", "create_directory"), ("filesystem", "move_file"),
           ("terminal", "run_command"), ("terminal", "show_security_rules"),
           ("python_execute", "python_execute"), ("pdf_tools", "read_pdf_pages"),
           ("pdf_tools", "get_pdf_info"), ("pdf_tools", "merge_pdfs"),
           ("pdf_tools", "extract_pdf_pages"), ("memory", "read_graph"), ("memory", "search_nodes"),
           ("memory", "open_nodes")),
)
