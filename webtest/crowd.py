"""Crowdsourcing platforms: URL parameters in, completion and screen-out links out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlencode

from webtest.study import Crowdsourcing

_PROLIFIC_ID = re.compile(r"^[0-9a-fA-F]{24}$")
_MTURK_ID = re.compile(r"^[A-Z0-9]{8,64}$")
_MTURK_SUBMIT = re.compile(r"^https://(www|workersandbox)\.mturk\.com/?$")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"

PARAMS = {
    "prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    "mturk": ("workerId", "assignmentId", "hitId", "turkSubmitTo"),
    "none": (),
}


@dataclass(frozen=True)
class PlatformIds:
    """Identifiers a participant arrived with (validated).

    For Prolific: ``pid`` = PROLIFIC_PID, ``study`` = STUDY_ID, ``session`` = SESSION_ID.
    For MTurk: ``pid`` = workerId, ``session`` = assignmentId, ``hit`` = hitId,
    ``submit_to`` = turkSubmitTo.
    """

    platform: str
    pid: str | None = None
    study: str | None = None
    session: str | None = None
    hit: str | None = None
    submit_to: str | None = None
    preview: bool = False

    def as_params(self) -> dict[str, str]:
        """The original URL parameters (to carry through the start form)."""
        if self.platform == "prolific":
            return {"PROLIFIC_PID": self.pid or "", "STUDY_ID": self.study or "", "SESSION_ID": self.session or ""}
        if self.platform == "mturk":
            return {"workerId": self.pid or "", "assignmentId": self.session or "", "hitId": self.hit or "",
                    "turkSubmitTo": self.submit_to or ""}
        return {}


def parse_params(platform: str, args: Mapping[str, str]) -> tuple[PlatformIds | None, list[str]]:
    """Validate the platform's URL parameters.

    Returns ``(ids, bad_keys)``: ``ids`` is ``None`` when a required key is missing or malformed
    (``bad_keys`` names them). MTurk previews (``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``) give
    ``ids.preview = True``.
    """
    if platform == "prolific":
        bad = [k for k in PARAMS["prolific"] if not _PROLIFIC_ID.match(args.get(k, "") or "")]
        if bad:
            return None, bad
        return PlatformIds("prolific", args["PROLIFIC_PID"], args["STUDY_ID"], args["SESSION_ID"]), []
    if platform == "mturk":
        aid = args.get("assignmentId", "") or ""
        if aid == MTURK_PREVIEW:
            return PlatformIds("mturk", preview=True), []
        bad = []
        if not _MTURK_ID.match(args.get("workerId", "") or ""):
            bad.append("workerId")
        if not _MTURK_ID.match(aid):
            bad.append("assignmentId")
        hit = args.get("hitId", "") or ""
        if hit and not _MTURK_ID.match(hit):
            bad.append("hitId")
        submit = args.get("turkSubmitTo", "") or ""
        if submit and not _MTURK_SUBMIT.match(submit):
            bad.append("turkSubmitTo")
        if bad:
            return None, bad
        return PlatformIds("mturk", args["workerId"], None, aid, hit or None, submit.rstrip("/") or None), []
    return PlatformIds("none"), []


def completion_url(cfg: Crowdsourcing) -> str | None:
    """Where a finished Prolific participant is sent (None for other platforms)."""
    if cfg.platform != "prolific":
        return None
    if cfg.completion_url:
        return cfg.completion_url
    return "https://app.prolific.com/submissions/complete?" + urlencode({"cc": cfg.completion_code})


def screen_out_url(cfg: Crowdsourcing) -> str | None:
    """Where a screened-out Prolific participant is sent (None when not configured)."""
    if cfg.platform != "prolific":
        return None
    if cfg.screen_out_url:
        return cfg.screen_out_url
    if cfg.screen_out_code:
        return "https://app.prolific.com/submissions/complete?" + urlencode({"cc": cfg.screen_out_code})
    return None


def mturk_submit_url(submit_to: str | None) -> str | None:
    return f"{submit_to}/mturk/externalSubmit" if submit_to else None
