"""The rules engine of rummikub-referee: pure Python, no imaging dependency.

Tiles, sets, tables, rule profiles, move rulings with revert plans, scoring and the solver.
Everything else in the project depends on this package, never the reverse.
"""

from referee.moves import Code, MoveError, RevertPlan, Ruling, Verdict, Violation, check_move
from referee.profiles import DEFAULT_PROFILE, PROFILES, BigPointScheme, Profile, ProfileError, get_profile
from referee.scoring import Ending, Game, PlayerRack, PlayerScore, ScoreError, Standing, score_game, tournament_sheet
from referee.sets import Reading, Reordering, SetCheck, SetKind, TileSet, check_set
from referee.table import LOOSE, Table, TableError
from referee.tiles import ALL_LABELS, COLOURS, JOKER, NUMBER_TILES, Colour, Tile, TileError, parse_tiles

__all__ = [
    "ALL_LABELS", "COLOURS", "DEFAULT_PROFILE", "JOKER", "LOOSE", "NUMBER_TILES", "PROFILES", "BigPointScheme",
    "Code", "Colour", "Ending", "Game", "MoveError", "PlayerRack", "PlayerScore", "Profile", "ProfileError",
    "Reading", "Reordering", "RevertPlan", "Ruling", "ScoreError", "SetCheck", "SetKind", "Standing", "Table",
    "TableError", "Tile", "TileError", "TileSet", "Verdict", "Violation", "check_move", "check_set", "get_profile",
    "parse_tiles", "score_game", "tournament_sheet",
]  # fmt: skip
__version__ = "0.1.0"
