"""Tile editions as data (vision/synth/editions.py): every named edition renders every tile, the classic look is
what the reference photo shows (no circle, big digits), held-out editions and fonts stay out of training, recipes
name editions or are refused in one line, and the default scenes (bench games, first datasets) are unchanged."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from tests.vision.synth.test_synth_scene import test_polygons_match_the_drawn_faces as check_polygons
from vision.synth import editions, effects, faces, fontfiles
from vision.synth.recipe import RecipeError, load_recipe
from vision.synth.scene import SceneParams, render_scene

ALLOWED = [
    (name, split)
    for name, e in editions.EDITIONS.items()
    for split in fontfiles.SPLITS
    if not (e.held_out and split == "train")
]


def _styles(edition: editions.Edition, split: str, n: int, seed: int = 0) -> list[faces.TileStyle]:
    rng = np.random.default_rng(seed)
    return [editions.sample_edition_style(rng, edition, split) for _ in range(n)]


def _ink(face: np.ndarray, style: faces.TileStyle) -> np.ndarray:
    """Where the face is far from its body colour (ink), as a bool mask."""
    return np.linalg.norm(face[..., :3].astype(np.float32) - np.array(style.body_bgr, np.float32), axis=-1) > 60


@pytest.mark.parametrize(("name", "split"), ALLOWED)
def test_every_named_edition_renders_all_53_faces(name: str, split: str) -> None:
    (style,) = _styles(editions.EDITIONS[name], split, 1)
    rng = np.random.default_rng(1)
    width, height = faces.face_size(style)
    seen = set()
    for label in ALL_LABELS:
        face = faces.render_face(label, style, rng)
        assert face.shape == (height, width, 4) and face.dtype == np.uint8
        assert face[height // 2, width // 2, 3] == 255 and face[0, 0, 3] < 128
        assert _ink(face, style).sum() > 60, label
        seen.add(_ink(face, style).tobytes())
    assert len(seen) == len(ALL_LABELS)  # no two tiles print the same
    assert style.edition == name and style.split == split


def test_classic_has_no_circle_and_digits_filling_55_to_65_percent_of_the_face() -> None:
    for split in fontfiles.SPLITS:
        for style in _styles(editions.CLASSIC, split, 6, seed=3):
            assert not style.circle and 0.69 <= style.face_aspect <= 0.74
            static = faces._static(style)
            assert static.recess.max() == 0.0
            # a flat face: no lip or recess floor anywhere between the rim and the wordmark
            height, width = static.alpha.shape
            grey = cv2.cvtColor(static.face.astype(np.uint8), cv2.COLOR_BGR2GRAY).astype(np.float32)
            inside = grey[round(0.12 * height) : round(0.78 * height), round(0.15 * width) : round(0.85 * width)]
            assert np.ptp(inside) <= 8, style.name
            for number in range(1, 14):
                ys = np.nonzero(faces._ink_mask(style, f"red-{number}").max(axis=1) > 0.5)[0]
                share = (ys.max() - ys.min() + 1) / height
                assert 0.53 <= share <= 0.67, (style.font_key, number, share)
    modern = _styles(editions.MODERN_CIRCLE, "train", 1)[0]
    grey = cv2.cvtColor(faces._static(modern).face.astype(np.uint8), cv2.COLOR_BGR2GRAY).astype(np.float32)
    assert faces._static(modern).recess.max() > 0.9 and np.ptp(grey[20:120, 20:100]) > 8  # the check can fail


def test_classic_jokers_are_an_outlined_face_one_red_one_black() -> None:
    (style,) = _styles(editions.CLASSIC, "train", 1)
    assert style.joker_variant == "outline-smiley"
    assert {style.joker_colour, style.second_joker_colour} == {"red", "black"}
    radius = style.recess_radius * faces.face_size(style)[0] * style.joker_scale
    drawn = faces._ink_mask(style, "joker") > 0.5
    assert 0.15 * np.pi * radius**2 < drawn.sum() < 0.5 * np.pi * radius**2  # drawn in outline, not a filled disc
    saturation = []
    for colour in ("red", "black"):
        face = faces.render_face("joker", style, np.random.default_rng(0), joker_colour=colour)
        ink = face[..., :3][drawn & (face[..., 3] == 255)]
        hsv = cv2.cvtColor(ink.reshape(-1, 1, 3), cv2.COLOR_BGR2HSV).reshape(-1, 3)
        saturation.append(float(np.median(hsv[:, 1])))  # red ink is saturated, black is not
    assert saturation[0] > 150 and saturation[1] < 100


def test_held_out_editions_and_fonts_never_appear_in_the_train_split() -> None:
    named = tuple(n for n in editions.EDITION_NAMES if not editions.EDITIONS[n].held_out)
    train = editions.edition_pool("train", 120, (*named, editions.MIX))
    assert {s.edition.split("~")[0] for s in train} >= set(named)
    assert not any("large-print" in s.edition for s in train)
    train_keys, heldout_keys = fontfiles.font_keys("train"), fontfiles.font_keys("heldout")
    assert not train_keys & heldout_keys
    assert all(s.font_key in train_keys and s.wordmark_font_key in train_keys for s in train)
    heldout = editions.edition_pool("heldout", 120, (*editions.EDITION_NAMES, editions.MIX))
    assert all(s.font_key in heldout_keys and s.wordmark_font_key in heldout_keys for s in heldout)
    assert {s.edition for s in heldout} >= {"classic", "large-print"}  # classic measurable on unseen fonts
    assert not {s.ink_bgr for s in train} & {s.ink_bgr for s in heldout}
    with pytest.raises(ValueError, match="held out"):
        editions.edition_pool("train", 4, ("large-print",))
    with pytest.raises(ValueError, match="held out"):
        editions.sample_edition_style(np.random.default_rng(0), editions.LARGE_PRINT, "train")


def _ink_fill(edition: editions.Edition, label: str, n: int = 16) -> np.ndarray:
    """How much of its own bounding box a digit's ink covers, for n table styles: heavy digits close their counters."""
    fills = []
    for style in _styles(edition, "train", n, seed=5):
        ink = faces._ink_mask(style, label) > 0.5
        ys, xs = np.nonzero(ink)
        fills.append(ink.sum() / ((np.ptp(ys) + 1) * (np.ptp(xs) + 1)))
    return np.array(fills)


def test_the_rounded_edition_trains_heavy_digits_in_fonts_no_other_edition_draws() -> None:
    rounded = editions.ROUNDED
    assert not rounded.held_out and rounded.circle is None
    others = {key for e in editions.EDITIONS.values() if e is not rounded for key in (*e.train_fonts, *e.heldout_fonts)}
    assert len(set(rounded.train_fonts) - others) >= 6
    assert not set(rounded.train_fonts) & set(editions.LARGE_PRINT.heldout_fonts)
    # heavier than the training photos' edition, and 6s as closed as the held-out large-print's (0.70-0.77)
    assert _ink_fill(rounded, "black-8").mean() >= _ink_fill(editions.MODERN_CIRCLE, "black-8").mean() + 0.03
    assert _ink_fill(rounded, "black-6").max() >= 0.72


def test_blends_lie_between_their_editions() -> None:
    mid = editions.blend(editions.CLASSIC, editions.TRAVEL, 0.5)
    assert editions.CLASSIC.digit_height[0] > mid.digit_height[0] > editions.TRAVEL.digit_height[0]
    assert editions.TRAVEL.inks.orange.hue_deg[0] > mid.inks.orange.hue_deg[0] > editions.CLASSIC.inks.orange.hue_deg[0]
    assert mid.circle is None and not mid.held_out
    assert editions.blend(editions.CLASSIC, editions.LARGE_PRINT, 0.2).held_out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("editions: [classic, deluxe]", "editions: unknown edition 'deluxe' \\(known: modern-circle, classic"),
        ("editions: classic", "editions must be a list of edition names"),
        ("editions: [large-print]", "editions: edition\\(s\\) large-print are held out for validation"),
        ("editions: [mix]", "editions: mix blends the recipe's named editions"),
        ("lighting: disco", "lighting must be one of default, wide, not 'disco'"),
        ("sensor: dslr", "sensor must be one of default, phone, not 'dslr'"),
    ],
)
def test_recipes_refuse_unknown_or_held_out_editions_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(RecipeError, match=message) as error:
        load_recipe(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


def test_the_editions_recipes_render_labelled_scenes_of_their_editions() -> None:
    for split in fontfiles.SPLITS:
        params, _ = load_recipe(f"synth-editions-{split}")
        params = replace(params, size=(640, 480))
        assert params.split == split and params.lighting == "wide" and params.sensor == "phone"
        scenes = [render_scene(seed, params) for seed in range(5)]
        assert all(scene.readable() for scene in scenes)
        assert all(2700 <= s.meta["lighting"]["colour_temperature_k"] <= 7500 for s in scenes)
        assert all(s.meta["style"]["edition"] for s in scenes)
    classic = replace(SceneParams(size=(640, 480)), editions=("classic",), rack_probability=0.0)
    check_polygons([render_scene(seed, classic) for seed in range(6)])  # taller faces: labels still exact


def test_wide_lighting_and_phone_sensor_are_what_they_say() -> None:
    rng = np.random.default_rng(0)
    temps = [effects.sample_lighting(rng, "train", "wide").colour_temperature_k for _ in range(400)]
    assert 2700 <= min(temps) < 2900 and 7300 < max(temps) <= 7500
    warm, cool = effects._temperature_gains(2700, 0.9), effects._temperature_gains(7500, 0.9)
    assert warm[2] > warm[0] and cool[0] > cool[2]  # BGR: warm light is red, cool light is blue
    phone = effects.sample_sensor(np.random.default_rng(1), (640, 480), "phone")
    assert phone.chroma_noise > 0 and phone.sharpen > 0 and 45 <= phone.jpeg_quality < 90
    plain = replace(phone, chroma_noise=0.0, sharpen=0.0, denoise=0.0)
    image = np.full((96, 128, 3), 128, np.uint8)
    a = effects.apply_sensor(image, phone, np.random.default_rng(2))
    b = effects.apply_sensor(image, plain, np.random.default_rng(2))
    assert not np.array_equal(a, b)


DEFAULT_SCENES = {
    0: (
        "58616a737c848a8f93969a9c9e9b96909fa4a8aeb2b4b4b1afadaaa8a5a19d98a4a9adb2b5b7b7b5b3b0aeaca9a5a29dacb1b1b4bdb8c6bd"
        "c8dab1b2b7ccaaa2b7c5b3d0dcb6dfbecfdbb2bbc8beada5afb5b4ccc0bbdfb6b7c0b3b3b3c0aaa69bb8b2b6b6dbe0b4b4d8b3b1c2aba9a5"
        "3a3ba0a8abb7c7b5c1cbaca8cfaca8a4737298a09b9aab9da59da29eb1aaa6a1a6acb0b3b4b5dab1afa1878fa6a8a39da1aab0b0b3c6babb"
        "b8b1acb7c4a59f9998a3b3aaadc7b1c0cad3c6acac9e9892",
        "784769acd1f4e0fb",
        "35a07f3781d4ae8d",
    ),
    1: (
        "b9bbbdbfbdb9b49496a0a7b4b1aea979bbbdc0c4bba0a8bcb7a498b4b2af4527bcbec3cad4ddd4d6b6a7afb4b2b07e6cbcbfc4cddbdfebe7"
        "c9aaaeb4b2b0adacbcbeafafd9cfcfdad7c3b7b2b1afaeacbcbda1aed7e5e9e1d0beb4b0ada7a9aabbbcb7bfcbd3d6cea0a59fa9a6a19ea8"
        "baa0a3aebbc4c5c1b5a494a1ab9ca0a7b7a8a0968dbabbb9b6b3b0aca9a7a6a5b4b4b4a9a0b2b8b7b5b3b0ada9a7a5a4afb0b1aa9a8eb1b7"
        "b5b3a1929ea6a4a2aaabadb1b3b1b6b5b4b1a39293a3a1a0",
        "c67dfbf5d96daf33",
        "0dd1401ebd548fbb",
    ),
    2: (
        "2538545658595c6b645e5f6d9d895c58273e575d5f756e91667f86606062615d294358686b686793647b7c6791676360294859666f6a6291"
        "7f968475aa736861294d595a6f70698b616b7b8f9e856c61295159595e5d737d60838b909e8567372853655c5b587b74618779767d715735"
        "29545765605b6f66605f6164656148372c525660788478625f605e5e5c5a3c302d4f54616d5e5f605c74795a5856322e2e4a4f625170746b"
        "57746b55535133312d43474b4d5354595155554f4d4b2e27",
        # 7f04f1b0ba587dd0 until a face had to be 9 px tall too (a rack's black-4, 57 x 4 px) and seen within 75
        # degrees of straight on (8 more of that rack's tiles, seen from above at the frame's edge)
        "37fd34424381c51c",
        "7855d8a4e634bfff",
    ),
}
"""Default scenes: a 16x12 grey thumbnail (area means of 80x80-pixel blocks, hex) and the labels' hash as rendered
before editions existed (commit 5e87322), and the hash of every draw the scene records (camera, lighting, tile style
with its font and inks, sensor) since style names stopped depending on where fonts are installed. Labels and draws
must match exactly (NumPy's generators are bit-exact everywhere; seed 2's changed once, on purpose: rack tiles seen
edge-on are no longer labelled readable); the thumbnail within 2 grey levels, because
OpenCV's SIMD paths may differ in the last bit between CPUs, and a style's faces were re-seeded once (their wear and
noise moved the thumbnails by at most 1 level), while a scene drawn differently moves its blocks far more."""


@pytest.mark.parametrize("seed", sorted(DEFAULT_SCENES))
def test_default_scenes_render_as_before_editions(seed: int) -> None:
    scene = render_scene(seed, SceneParams())
    thumbnail_hex, labels_hash, draws_hash = DEFAULT_SCENES[seed]
    labels = json.dumps([t.to_json() for t in scene.tiles]).encode()
    assert hashlib.sha256(labels).hexdigest()[:16] == labels_hash
    assert hashlib.sha256(json.dumps(scene.meta, sort_keys=True).encode()).hexdigest()[:16] == draws_hash
    grey = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
    thumbnail = cv2.resize(grey, (16, 12), interpolation=cv2.INTER_AREA).astype(int).reshape(-1)
    expected = np.frombuffer(bytes.fromhex(thumbnail_hex), np.uint8).astype(int)
    assert np.abs(thumbnail - expected).max() <= 2


def test_a_style_renders_the_same_wherever_its_fonts_are_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A style's name seeds its faces' wear and noise: it must not hold the font's folder (a PyPI font lives in
    the virtual environment, so a clone elsewhere rendered other datasets from the same seeds)."""
    here = faces.sample_style(np.random.default_rng(3), "train")
    for getter in ("available_fonts", "available_wordmark_fonts"):
        found = getattr(faces, getter)
        moved = lambda *args, found=found: tuple((k, f"/elsewhere/venv/{Path(p).name}") for k, p in found(*args))  # noqa: E731
        monkeypatch.setattr(faces, getter, moved)
    there = faces.sample_style(np.random.default_rng(3), "train")
    assert there.font_path != here.font_path and there.name == here.name
