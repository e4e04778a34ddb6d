"""Every user-visible string of the participant and admin pages, in one place.

A study translates or rewords them with a ``strings:`` mapping in ``study.yaml`` (same keys).
Values are plain text (autoescaped in templates) and may contain ``{name}`` placeholders filled
with :meth:`str.format`.
"""

from __future__ import annotations

from typing import Mapping

EN: dict[str, str] = {
    # general
    "app.lang": "en",
    "app.skip": "Skip to content",
    "app.progress": "Progress",
    # the trial page's heading ("Comparison {n} of {total}") is its only counter; the progress
    # line beside the bar says how much of the whole study ({percent}, practice included) is done
    # ({done} = this page's position and {total} = all pages are also filled, for older overrides)
    "app.progress_text": "{percent}% done",
    "app.continue": "Continue",
    "app.start": "Start",
    "app.error_title": "Something went wrong",
    "app.back_to_study": "Back to the study",
    "app.not_found": "This page does not exist.",
    "app.too_large": "The request was too large.",
    "app.csrf": "Your session has expired or the form was not sent from this site. Reload the page and try again.",
    "app.server_error": "The server could not handle this request. Please try again in a moment.",
    "app.required": "This field is required.",
    "app.number": "Enter a number between {min} and {max}.",
    "app.choose": "Choose one of the options.",
    "app.too_long": "Please keep this under {max} characters.",
    # landing
    "landing.start_hint": "The study takes about {minutes} minutes.",
    "landing.preview": "Accept the HIT to start the study.",
    "landing.need_platform_ids": "This study must be opened from its {platform} link (missing or malformed: {keys}).",
    # consent
    "consent.title": "Consent",
    "consent.agree": "I agree to take part",
    "consent.decline": "I do not agree",
    "consent.declined": "You chose not to take part. Thank you for your time.",
    # demographics
    "demographics.title": "About you",
    "demographics.intro": "A few questions about you. Optional questions can be left empty.",
    "demographics.optional": "(optional)",
    # setup stages (device check, volume calibration, headphone screening)
    "setup.device.title": "Checking your screen",
    "setup.device.intro": "This study needs a browser window of at least {min_width} × {min_height} pixels{touch}. Your window is measured when you press the button.",
    "setup.device.needs_pointer": " and a computer with a mouse or trackpad",
    "setup.device.check": "Check my screen",
    "setup.device.too_small": "Your browser window is {width} × {height} pixels; this study needs at least {min_width} × {min_height}. Make the window larger (or maximise it), then press the button again.",
    "setup.device.no_js": "Your screen could not be measured: this study needs JavaScript. Turn it on, reload the page and press the button again.",
    "setup.device.stop": "This study needs a computer with a mouse or trackpad; it cannot be done on a phone or tablet. Thank you for your time.",
    "setup.volume.title": "Setting the volume",
    "setup.volume.intro": "Put on your headphones. Press Play: a steady noise plays. Set your computer's volume so that the noise is clearly audible and comfortable, not loud. Keep this volume for the rest of the study.",
    "setup.volume.play": "Play the calibration sound",
    "setup.volume.pause": "Stop the sound",
    "setup.volume.comfortable": "The volume is comfortable",
    "setup.volume.cannot_hear": "I cannot hear the sound",
    "setup.volume.must_play": "Play the sound first.",
    "setup.volume.stop": "This study needs sound that you can hear, so it cannot continue. Thank you for your time.",
    "setup.headphones.title": "Headphone check",
    "setup.headphones.intro": "Each of the {n} sounds has three tones. Listen and choose the tone that is the quietest. Each sound can be played only once, so listen carefully.",
    "setup.headphones.trial": "Sound {n} of {total}",
    "setup.headphones.play": "Play the sound",
    "setup.headphones.playing": "Playing…",
    "setup.headphones.question": "Which tone was the quietest?",
    "setup.headphones.tone_1": "First",
    "setup.headphones.tone_2": "Second",
    "setup.headphones.tone_3": "Third",
    "setup.headphones.next": "Next sound",
    "setup.headphones.finish": "Finish the check",
    "setup.headphones.no_js": "This check needs JavaScript to play the sounds.",
    "setup.headphones.load_failed": "The sound could not be loaded ({reason}). Reload the page to try again.",
    "setup.headphones.stop": "This study needs headphones, and the headphone check was not passed, so it cannot continue. Thank you for your time.",
    # instructions
    "instructions.title": "Instructions",
    "instructions.keys": "Keyboard: A plays the left clip, L plays the right clip, 1–{n} or the arrow keys choose an answer, Enter goes on.",
    "instructions.begin": "Begin",
    # trials
    "trial.title": "Comparison {n} of {total}",
    "trial.training_title": "Practice {n} of {total}",
    "trial.training_note": "This is a practice comparison; it is not recorded for analysis.",
    "trial.left": "Left clip",
    "trial.right": "Right clip",
    "trial.play": "Play",
    "trial.pause": "Pause",
    "trial.replay": "Play again",
    "trial.play_left": "Play the left clip",
    "trial.play_right": "Play the right clip",
    "trial.must_end": "Play both clips to the end to continue.",
    "trial.ready": "Choose an answer, then continue.",
    "trial.answered": "Press Next to continue.",
    "trial.load_failed": "The clips could not be loaded ({reason}). Reload the page to try again.",
    "trial.stacked_left": "(top)",
    "trial.stacked_right": "(bottom)",
    "trial.next": "Next",
    "trial.saving": "Saving…",
    "trial.save_failed": "Your answer could not be saved ({reason}). Check your connection and press Next again.",
    "trial.too_fast": "Please watch both clips to the end before answering.",
    "trial.attention": "Attention check: for this pair, please answer “{label}”.",
    "trial.acr_left": "Rating of the left clip",
    "trial.acr_right": "Rating of the right clip",
    "trial.scale_group": "Your answer",
    "trial.loading": "Loading…",
    "trial.canvas_label": "Animated 3-D figure of the {side}",
    "trial.no_webgl": ("Your browser cannot show the 3-D figures (WebGL is turned off or not supported). "
                       "Please open this page in a current Chrome, Edge, Firefox or Safari with hardware "
                       "acceleration on."),
    "trial.play_both": "Play both",
    "trial.no_js": "This study needs JavaScript to play the clips.",
    # end
    "done.title": "Thank you!",
    "done.text": "You have completed the study.",
    "done.code": "Your completion code is:",
    "done.redirect": "Return to {platform} to finish",
    "done.redirecting": "You will be taken back to {platform} in {seconds} seconds; note your code first, or use the button.",
    "done.mturk_submit": "Submit the HIT",
    "stop.screened_out": "Unfortunately you cannot continue with this study. Thank you for your time.",
    "stop.full": "This study is full at the moment. Thank you for your interest.",
    "stop.expired": "Your session expired after a long pause and your place was given to someone else. Thank you for your time.",
    "stop.title": "The study has ended for you",
    # scale labels (the registry in webtest.scales holds the same English labels)
    "scale.question.ccr7": "Compared with the left clip, the right clip is:",
    "scale.question.cmos5": "Compared with the left clip, the right clip is:",
    "scale.question.ab3": "Which clip is better?",
    "scale.question.acr5": "Rate each clip.",
    # admin
    "admin.title": "Study administration",
    "admin.login": "Log in",
    "admin.logout": "Log out",
    "admin.logout_everywhere": "Log out everywhere ({n} admin sessions)",
    "admin.password": "Password",
    "admin.bad_password": "Wrong password.",
    "admin.locked": "Too many wrong passwords. Try again in {wait}. (A browser that has logged in here before is not affected by other people's attempts.)",
    "admin.disabled": "The admin pages are disabled: no admin password hash is configured (set EVALKIT_ADMIN_PASSWORD_HASH or admin.password_hash in study.yaml).",
    "admin.participants": "Participants",
    "admin.cells": "Design cells",
    "admin.cmos": "Live CMOS per comparison",
    "admin.mos": "Live MOS per system (absolute ratings)",
    "admin.cmos_note": "Mean sign-corrected score (positive = system A better) over main-trial ratings of non-excluded participants, with the reports' 95 % interval (cluster-robust t over participants); a live monitor: use the reports package for the study's analysis.",
    "admin.no_interval": "n/a (too few answers)",
    "admin.export": "Export",
    "admin.no_data": "No answers yet.",
    "admin.all_excluded": "{answers} answers are stored, but all come from participants excluded by the declared rules ({participants} excluded), so none is analysed here.",
    "admin.none_analysed": "{answers} answers are stored, but none can be analysed yet (quality-check trials or excluded participants only).",
}


def merged(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The English strings with a study's overrides applied."""
    out = dict(EN)
    if overrides:
        out.update(overrides)
    return out


def translate(table: Mapping[str, str], key: str, **values) -> str:
    """The string for ``key`` with ``{placeholders}`` filled; the key itself if unknown."""
    text = table.get(key, key)
    if values:
        try:
            return text.format(**values)
        except (KeyError, IndexError, ValueError):
            return text
    return text
