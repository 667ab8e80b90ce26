"""claim_done: the agent's declaration that the task is finished."""

from __future__ import annotations

from loca.core.clock import iso_z
from mock_servers.core.models import ClaimRecord
from mock_servers.core.toolkit import Call, Toolbox

toolbox = Toolbox("claim_done")
CLAIM_TEXT = "you have claimed the task is done!"


@toolbox.tool(rw="write", core=True, idempotent=True)
def claim_done(call: Call) -> str:
    """Declare the task finished. Call it once, when and only when the task is complete;
    the world is graded as it stands."""
    if call.session.get(ClaimRecord, 1) is None:
        call.session.add(ClaimRecord(id=1, claimed_at=iso_z(call.now)))
    return CLAIM_TEXT


build = toolbox.build
