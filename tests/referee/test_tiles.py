import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.tiles import ALL_LABELS, JOKER, NUMBER_TILES, Colour, Tile, TileError, format_tiles, parse_tiles

tiles = st.sampled_from([*NUMBER_TILES, JOKER])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("red-7", Tile(Colour.RED, 7)),
        ("r7", Tile(Colour.RED, 7)),  # short form of DESIGN.md
        ("R 7", Tile(Colour.RED, 7)),  # loose spacing and case
        ("red_7", Tile(Colour.RED, 7)),  # the real dataset's class names
        ("k13", Tile(Colour.BLACK, 13)),  # k for black, as in card notation
        ("o10", Tile(Colour.ORANGE, 10)),
        ("blue-1", Tile(Colour.BLUE, 1)),
        ("JOKER", JOKER),
        ("j", JOKER),
    ],
)
def test_parse_is_loose(text: str, expected: Tile) -> None:
    assert Tile.parse(text) == expected


@pytest.mark.parametrize("text", ["red-14", "red-0", "green-5", "", "7", "red", "joker-1", "r-1-2"])
def test_unknown_labels_raise_value_errors_quoting_the_input(text: str) -> None:
    with pytest.raises(TileError, match="unknown") as info:
        Tile.parse(text)
    assert repr(text) in str(info.value) or text == ""


@pytest.mark.parametrize(
    "text",
    [
        "red-\u0665",  # Arabic-Indic five: Python's \d and int() take it for 5
        "red-\u06f5",  # Extended Arabic-Indic five
        "red-\uff15",  # fullwidth five
        "r\u0967\u0969",  # Devanagari 13
        "\u212a5",  # the Kelvin sign, which case-folds to k (black)
        "jo\u212aer",  # a joker spelt with it
        "red-\u00b2",  # superscript two
    ],
)
def test_labels_are_ascii_only(text: str) -> None:
    with pytest.raises(TileError, match="unknown tile label"):
        Tile.parse(text)


def test_non_string_label_is_a_clear_error() -> None:
    with pytest.raises(TileError, match="must be text"):
        Tile.parse(7)  # type: ignore[arg-type]


@given(tiles)
def test_text_round_trip(tile: Tile) -> None:
    assert Tile.parse(str(tile)) == tile
    assert Tile.parse(tile.short) == tile
    assert eval(repr(tile)) == tile


def test_53_labels_in_canonical_order() -> None:
    assert len(ALL_LABELS) == 53 == len(set(ALL_LABELS))
    assert ALL_LABELS[0] == "black-1" and ALL_LABELS[13] == "red-1" and ALL_LABELS[-1] == "joker"


@given(st.lists(tiles))
def test_sorting_puts_jokers_last_and_round_trips_lists(items: list[Tile]) -> None:
    ordered = sorted(items)
    assert [t for t in ordered if t.is_joker] == ordered[len(ordered) - ordered.count(JOKER) :]
    assert parse_tiles(format_tiles(items)) == items


def test_joker_has_no_face_value() -> None:
    with pytest.raises(ValueError, match="joker"):
        _ = JOKER.face_value


def test_half_a_tile_is_rejected() -> None:
    with pytest.raises(TileError):
        Tile(Colour.RED, None)
