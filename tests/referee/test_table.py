import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.table import LOOSE, Table, TableError
from referee.tiles import JOKER, NUMBER_TILES

tile_lists = st.lists(st.sampled_from([*NUMBER_TILES, JOKER]), max_size=6)
tables = st.builds(Table.of, st.lists(tile_lists.filter(bool), max_size=5), tile_lists)


@given(tables)
def test_text_and_json_round_trip(table: Table) -> None:
    assert Table.parse(str(table)) == table
    assert eval(repr(table)) == table
    assert Table.from_json(json.loads(json.dumps(table.to_json()))) == table


def test_text_form_accepts_bars_and_short_labels() -> None:
    assert Table.parse("r5 r6 r7 | k3 b3 o3 loose: j") == Table.parse(
        "[red-5 red-6 red-7] [black-3 blue-3 orange-3] loose: joker"
    )


def test_tile_objects_keep_their_extras_and_mark_low_confidence() -> None:
    data = {
        "sets": [
            [{"label": "red-5", "box": [1, 2, 3, 4], "confidence": 0.31}, "r6", {"label": "r7", "uncertain": True}]
        ],
        "loose": [{"label": "joker", "confidence": 0.99}],
    }
    table = Table.from_json(data)
    assert table.uncertain == {(0, 0), (0, 2)}
    assert table.extras[(LOOSE, 0)] == {"confidence": 0.99}
    round_trip = table.to_json(with_extras=True)
    assert round_trip["sets"][0][0] == {"label": "red-5", "box": [1, 2, 3, 4], "confidence": 0.31, "uncertain": True}
    assert Table.from_json(round_trip) == table


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "malformed JSON"),
        ("[]", "a table is a JSON object"),
        ('{"sets": "r5"}', "'sets' must be a list of lists"),
        ('{"sets": [["red-14"]]}', "sets[0][0]: unknown tile label 'red-14'"),
        ('{"sets": [[{"box": [0, 0, 1, 1]}]]}', "needs a 'label'"),
        ('{"sets": [], "loose": [5]}', "loose[0]: a tile label must be a string"),
        ('{"sets": [[{"label": "r5", "confidence": "high"}]]}', "'confidence' must be a number"),
        ('{"set": []}', "unknown field(s) in table: set"),
    ],
)
def test_bad_json_names_the_culprit(text: str, message: str) -> None:
    with pytest.raises(TableError) as info:
        Table.from_json_text(text, source="after.json")
    assert str(info.value).startswith("after.json: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("tile", "uncertain"),
    [
        ({"label": "r5", "confidence": float("nan")}, True),  # NaN compares false with everything: not "sure"
        ({"label": "r5", "confidence": None}, True),  # a reader that could not say
        ({"label": "r5", "box": [0, 0, 9, 9]}, True),  # a reading without its confidence
        ({"label": "r5", "box": [0, 0, 9, 9], "confidence": 0.9}, False),
        ({"label": "r5", "confidence": 0}, True),
        ({"label": "r5", "confidence": 1}, False),
        ({"label": "r5"}, False),  # a typed-in table: no reading, nothing to doubt
        ({"label": "r5", "uncertain": True, "confidence": 0.99}, True),
    ],
)
def test_nan_null_and_missing_confidences_read_as_uncertain(tile: dict, uncertain: bool) -> None:
    table = Table.from_json({"sets": [[tile, "r6", "r7"]]})
    assert (table.uncertain == {(0, 0)}) is uncertain


@pytest.mark.parametrize("confidence", [float("inf"), float("-inf"), 1.5, -0.1, 1e309, 2])
def test_a_confidence_no_reading_can_have_is_a_table_error(confidence: float) -> None:
    with pytest.raises(TableError, match=r"sets\[0\]\[1\]: 'confidence' must be between 0 and 1"):
        Table.from_json({"sets": [["r5", {"label": "r6", "confidence": confidence}, "r7"]]})


def test_unreadable_file_is_a_table_error(tmp_path) -> None:
    with pytest.raises(TableError, match="cannot read table file"):
        Table.load(tmp_path / "missing.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TableError):
        Table.load(tmp_path / "binary.json")


def test_same_layout_ignores_set_order_and_group_order_but_not_run_order() -> None:
    a = Table.parse("[r5 r6 j] [k3 b3 o3]")
    assert a.same_layout(Table.parse("[k3 b3 o3] [r5 r6 j]"))
    assert a.same_layout(Table.parse("[r5 r6 j] [b3 k3 o3]"))  # a group has no order
    assert not a.same_layout(Table.parse("[j r5 r6] [k3 b3 o3]"))  # the joker moved from 7 to 4
