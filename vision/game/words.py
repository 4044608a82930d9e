"""The referee's words on the table written into a game log after the fact: ``rummikub-referee record``.

During a live game the station records them (its Table… dialog); a game analysed from a video, or one whose
referee said it only at the end, gets them here: the pool ran out (``pool-empty``), a player asked for a re-deal
(``redeal``), said "I'll open next round" (``announced-opening``), went out (``out``), or the last override or
word is taken back (``undo``). The log is resumed with its lock (a log a ``live`` still writes is refused),
replayed strictly through :class:`~vision.game.moves.GameKeeper`, and the word is checked by the game before it is
appended, completed as the station's would be (the seed rule, the pool's last drawer). ``score --log`` reads it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from referee.game import GameStateError
from vision.game.gamelog import GameLog, GameLogError, GameSetup
from vision.game.moves import GameKeeper

WORDS = ("pool-empty", "redeal", "announced-opening", "out", "undo")
"""What ``record`` writes: the words on the table (:data:`referee.events.TableWord`) and the undo."""


def record_word(
    path: str | Path,
    word: str,
    *,
    player: int | None = None,
    pairs: int | None = None,
    cause: str | None = None,
    at_s: float | None = None,
) -> tuple[dict[str, Any], GameKeeper]:
    """Append ``word`` to the game log at ``path`` (``player`` 0-based; ``at_s``: the game's time, by default the
    log's last); the line written and the game after it. A word the game refuses is a :class:`GameLogError`
    naming it, and the log is left as it was."""
    if word not in WORDS:
        raise GameLogError(f"unknown word {word!r} (expected {', '.join(WORDS)})")
    log, events = GameLog.resume(path)
    try:
        setup = GameSetup.from_start(events[0], path)
        keeper = setup.keeper()
        for event, number in zip(events, log.lines, strict=True):
            try:
                keeper.apply(event)
            except GameStateError as error:
                raise GameLogError(f"{path}:{number}: {error}") from None
        if at_s is None:
            times = [float(e["time_s"]) for e in events if _finite(e.get("time_s"))]
            at_s = max(times, default=0.0)
        elif not _finite(at_s) or at_s < 0:
            raise GameLogError(f"a time in the game is a finite number of seconds, not {at_s!r}")
        line: dict[str, Any] = {"event": word, "time_s": round(float(at_s), 3)}
        if word == "undo":
            line = {"event": "override", "time_s": line["time_s"], "action": "undo"}
            if not keeper.game.ledger or all(record.undone for record in keeper.game.ledger):
                raise GameLogError(f"{path}: no override or word to undo")
        for key, value in (("player", player), ("pairs", pairs), ("cause", cause)):
            if value is not None:
                line[key] = value
        line["by"] = "record"
        try:
            keeper.apply(line)  # completes the line (the seed rule...) or refuses it, the game unchanged
        except GameStateError as error:
            raise GameLogError(f"{path}: {error}") from None
        log.append(line)
    finally:
        log.close()
    return line, keeper


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
