"""``bench pipeline --enrol``: the row of a venue that enrolled its own set before play. Each game is analysed on the
user's path with the model folder enrolled from grid photos of the film's own tile set (a stubbed pipeline here),
and the real ``enrol`` made that folder from those photos."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vision.synth.grid import film_style
from vision.synth.scene import style_pool

SIZE = (1280, 720)


def game_folder(root: Path, name: str, seed: int, style_index: int) -> Path:
    """A synth-game folder's truth header only (the enrolment reads nothing else)."""
    folder = root / name
    folder.mkdir(parents=True)
    header = {"format": "rummikub-sim-game/1", "seed": seed, "size": list(SIZE), "players": 2, "profile": "official",
              "video": "game.mp4", "style": style_pool("train", 64)[style_index].describe()}  # fmt: skip
    (folder / "truth.jsonl").write_text(json.dumps(header) + "\n")
    return folder


def test_the_enrolled_row_reads_each_game_with_its_own_enrolled_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stubbed enrolment and analysis: the enrolled row must hand each game the reader of the folder enrolled for
    that game (the default row the shipped models), on the user's path (play area found on its own)."""
    import vision.eval.enrol_bench as enrol_bench
    import vision.eval.pipeline_bench as bench
    import vision.game.pipeline as pipeline

    games = [game_folder(tmp_path, "ga", 11, 3), game_folder(tmp_path, "gb", 12, 40)]
    enrolled: list[Path] = []

    def fake_enrol_venue(folder: Path, out: Path, models: Path | None = None, camera: str = "grid") -> dict[str, Any]:
        out.mkdir(parents=True)
        enrolled.append(out)
        figures = {"before": {"crops": 10, "accuracy": 0.9, "wrong_confident": 1},
                   "after": {"crops": 10, "accuracy": 1.0, "wrong_confident": 0}}  # fmt: skip
        return {"what": "grid photos in the film's style", "style_index": 3, "style": "s", "models": str(out),
                "reused": False, "enrol_s": 1.0, "tiles_enrolled": 106, "jokers_enrolled": 2,
                "figures": {"photos": figures, "holdout": figures}, "read_differently_before": 0,
                "warnings": []}  # fmt: skip

    def fake_reader(models: Path | None = None, **_: Any) -> str:
        return f"reader of {models}"

    analysed: list[tuple[str, str, str]] = []

    def fake_analyse(folder: Path, out: Path, reader: Any, *, progress: bool, calibration: str) -> dict[str, Any]:
        analysed.append((folder.name, reader, calibration))
        return {"rows": [], "phantoms": [], "detected": 0, "video_s": 10.0, "seconds": 1.0, "samples": 5,
                "frame_size": list(SIZE), "folder": str(folder)}  # fmt: skip

    monkeypatch.setattr(enrol_bench, "enrol_venue", fake_enrol_venue)
    monkeypatch.setattr(pipeline, "pipeline_reader", fake_reader)
    monkeypatch.setattr(bench, "analyse_folder", fake_analyse)
    result = bench.run_pipeline_benchmark(games, tmp_path / "out", progress=False, calibrations=("auto",), enrol=True)

    assert enrolled == [tmp_path / "out" / "enrolled-models" / name for name in ("ga", "gb")]
    assert analysed == [
        ("ga", "reader of None", "auto"),
        ("gb", "reader of None", "auto"),
        ("ga", f"reader of {enrolled[0]}", "auto"),
        ("gb", f"reader of {enrolled[1]}", "auto"),
    ]
    assert list(result["rows"]) == ["auto", "enrolled"] and result["summary"] == result["rows"]["auto"]["summary"]
    text = bench.format_pipeline_benchmark(result)
    assert "the venue's own set enrolled before play" in text
    assert "enrolled 106 tiles (2 jokers) from 2 grid photos in the film's style 3" in text


def test_the_grid_photos_show_the_films_own_tile_set(tmp_path: Path) -> None:
    from vision.eval.enrol_bench import venue_grid_photos

    folder = game_folder(tmp_path, "g", 1601, 17)
    header = json.loads((folder / "truth.jsonl").read_text())
    assert film_style(header)[0] == 17
    photos, how = venue_grid_photos(header, tmp_path / "photos")
    assert how["style_index"] == 17 and how["style"] == style_pool("train", 64)[17].name
    assert [p["tiles"] for p in how["photos"]] == [54, 52] and all(p.is_file() for p in photos)


def test_the_venue_enrols_with_the_real_command_and_keeps_the_folder_when_the_photos_are_the_same(
    tmp_path: Path,
) -> None:
    """The real ``enrol`` in a process of its own (tens of seconds on 2 cores)."""
    from vision.eval.enrol_bench import enrol_venue

    folder = game_folder(tmp_path, "g", 1601, 17)
    out = tmp_path / "models" / "g"
    first = enrol_venue(folder, out)
    assert not first["reused"] and (out / "enrolment-head.npz").is_file() and (out / "model-card.json").is_file()
    assert first["tiles_enrolled"] == 106 and first["jokers_enrolled"] == 2
    assert first["takes"] == len(first["refused"]) + 1
    assert first["figures"]["holdout"]["after"]["crops"] > 0
    again = enrol_venue(folder, out)
    assert again["reused"] and again["figures"] == first["figures"]


def test_a_new_film_records_its_tile_sets_index(game: Path) -> None:
    """``synth-game`` writes ``style_index`` beside the style's description, and both name the same set."""
    header = json.loads((game / "truth.jsonl").read_text().splitlines()[0])
    index, style = film_style(header)
    assert index == header["style_index"] and style.describe() == header["style"]


def test_the_venue_camera_at_the_films_scale_and_no_other(tmp_path: Path) -> None:
    from vision.eval.enrol_bench import film_px_per_mm, venue_grid_photos

    header = {"seed": 3, "size": list(SIZE), "style": style_pool("train", 64)[5].describe(),
              "play_area_px": [[100, 100], [900, 100], [900, 620], [100, 620]], "play_area_mm": [860, 560]}  # fmt: skip
    assert film_px_per_mm(header) == pytest.approx(800 / 860)
    _, how = venue_grid_photos(header, tmp_path, camera="film")
    assert how["camera"] == "film" and "at the film's scale (0.93 px/mm)" in how["what"]
    with pytest.raises(ValueError, match="not 'phone'"):
        venue_grid_photos(header, tmp_path, camera="phone")


def test_a_game_whose_every_take_is_refused_is_left_out_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.eval.enrol_bench as enrol_bench
    import vision.eval.pipeline_bench as bench

    def refuse(folder: Path, out: Path, models: Path | None = None, camera: str = "grid") -> dict[str, Any]:
        raise enrol_bench.VenueEnrolmentError(f"{folder.name}: every one of 4 takes refused; the last: no tile found")

    monkeypatch.setattr(enrol_bench, "enrol_venue", refuse)
    monkeypatch.setattr("vision.game.pipeline.pipeline_reader", lambda models=None, **_: "reader")
    result = bench.run_pipeline_benchmark(
        [game_folder(tmp_path, "ga", 11, 3)], tmp_path / "out", progress=False, calibrations=(), enrol=True
    )
    row = result["rows"]["enrolled"]
    assert row["games"] == [] and [Path(g["folder"]).name for g in row["summary"]["enrolment"]["not_enrolled"]] == [
        "ga"
    ]
    assert "ga: not enrolled, left out: ga: every one of 4 takes refused" in bench.format_pipeline_benchmark(result)
