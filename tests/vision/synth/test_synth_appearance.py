"""Appearance building blocks of the synthetic scenes: faces, tables, lighting/sensor effects, distractors."""

from __future__ import annotations

import json
import pickle

import cv2
import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from vision.synth import distractors, effects, faces, fontfiles, textures


def _ink_pixels(face: np.ndarray, style: faces.TileStyle) -> np.ndarray:
    """Solid ink pixels of the printed number: in the digit area, far from the body colour, stroke cores only
    (anti-aliased stroke edges blend with the cream body and would drag every hue toward yellow)."""
    body = np.array(style.body_bgr, np.float32)
    bgr = face[20:110, 15:105, :3].astype(np.float32)
    dist = np.linalg.norm(bgr - body, axis=-1)
    ink = dist > 60
    if ink.sum() < 10:
        return bgr[ink]
    return bgr[ink & (dist >= np.percentile(dist[ink], 60))]


def _mean_hsv(pixels: np.ndarray) -> tuple[float, float, float]:
    hsv = cv2.cvtColor(pixels.reshape(-1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2HSV_FULL).reshape(-1, 3)
    ang = hsv[:, 0].astype(np.float64) / 256.0 * 2 * np.pi  # circular mean: red wraps around 0
    hue = (np.degrees(np.arctan2(np.sin(ang).mean(), np.cos(ang).mean())) + 360.0) % 360.0
    return float(hue), float(hsv[:, 1].mean() / 255.0), float(hsv[:, 2].mean() / 255.0)


def test_every_label_renders_with_shape_dtype_and_alpha() -> None:
    rng = np.random.default_rng(0)
    style = faces.sample_style(rng)
    w, h = faces.FACE_SIZE
    for label in ALL_LABELS:
        face = faces.render_face(label, style, rng)
        assert face.shape == (h, w, 4) and face.dtype == np.uint8
        assert face[h // 2, w // 2, 3] == 255 and face[0, 0, 3] < 128  # rounded corner is transparent
        assert len(_ink_pixels(face, style)) > 40, label
    back = faces.render_back(style, rng)
    assert back.shape == (h, w, 4) and back.dtype == np.uint8
    assert len(_ink_pixels(back, style)) < 10
    with pytest.raises(ValueError):
        faces.render_face("green-3", style, rng)


def test_faces_are_deterministic_for_a_seed() -> None:
    def render(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        style = faces.sample_style(rng, "heldout")
        return np.stack([faces.render_face(label, style, rng) for label in ("red-6", "joker", "blue-13")])

    assert np.array_equal(render(5), render(5))
    assert not np.array_equal(render(5), render(6))


def test_style_is_picklable_and_json_describable() -> None:
    style = faces.sample_style(np.random.default_rng(1))
    assert pickle.loads(pickle.dumps(style)) == style
    desc = json.loads(json.dumps(style.describe()))
    assert desc["name"] == style.name and desc["split"] == "train"
    assert set(desc["ink_bgr"]) == {"black", "red", "blue", "orange"}
    assert sum(faces.side_colour(style)) < sum(style.body_bgr)


def test_splits_never_share_fonts_or_materials() -> None:
    assert not fontfiles.font_keys("train") & fontfiles.font_keys("heldout")
    assert not set(textures.TABLE_MATERIALS["train"]) & set(textures.TABLE_MATERIALS["heldout"])
    rng = np.random.default_rng(2)
    used = {split: {faces.sample_style(rng, split).font_path for _ in range(40)} for split in fontfiles.SPLITS}
    assert not used["train"] & used["heldout"]
    paths = {split: {p for _, p in fontfiles.available_fonts(split)} for split in fontfiles.SPLITS}
    assert not paths["train"] & paths["heldout"]


def test_splits_use_disjoint_ink_colours() -> None:
    rng = np.random.default_rng(3)
    inks = {split: {faces.sample_style(rng, split).ink_bgr for _ in range(50)} for split in fontfiles.SPLITS}
    train_inks = {ink for style_inks in inks["train"] for ink in style_inks}
    heldout_inks = {ink for style_inks in inks["heldout"] for ink in style_inks}
    assert not train_inks & heldout_inks


def test_colour_classes_stay_separable() -> None:
    """Across many editions, orange never drifts into red and blue never into black."""
    rng = np.random.default_rng(4)
    hues: dict[str, list[float]] = {"red": [], "orange": []}
    blue_sv, black_sv = [], []
    for i in range(200):
        style = faces.sample_style(rng, fontfiles.SPLITS[i % 2])
        for colour in ("red", "orange", "blue", "black"):
            face = faces.render_face(f"{colour}-8", style, rng)
            hue, sat, val = _mean_hsv(_ink_pixels(face, style))
            if colour in hues:
                hues[colour].append((hue + 180.0) % 360.0 - 180.0)  # red around 0 as negative/positive
            elif colour == "blue":
                blue_sv.append((sat, val))
            else:
                black_sv.append((sat, val))
    assert max(hues["red"]) + 10.0 < min(hues["orange"])
    blue, black = np.array(blue_sv), np.array(black_sv)
    assert blue[:, 0].min() > 0.55 and black[:, 1].max() + 0.15 < blue[:, 1].min()


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_every_table_material_renders(split: str) -> None:
    for material in textures.TABLE_MATERIALS[split]:
        img = textures.table_texture(material, (160, 120), 1.0, np.random.default_rng(0))
        assert img.shape == (120, 160, 3) and img.dtype == np.uint8
        again = textures.table_texture(material, (160, 120), 1.0, np.random.default_rng(0))
        assert np.array_equal(img, again)
    with pytest.raises(ValueError):
        textures.table_texture("lava", (10, 10), 1.0, np.random.default_rng(0))


def test_lighting_and_sensor_keep_shape_and_are_describable() -> None:
    rng = np.random.default_rng(5)
    img = textures.table_texture("oak", (320, 240), 1.0, rng)
    for split in ("train", "heldout"):
        lighting = effects.sample_lighting(rng, split)
        sensor = effects.sample_sensor(rng, (320, 240))
        out = effects.apply_sensor(effects.apply_lighting(img, lighting), sensor, rng)
        assert out.shape == img.shape and out.dtype == np.uint8
        json.dumps(lighting.describe())
        json.dumps(sensor.describe())
        assert 0.0 <= effects.shadow_strength(lighting) <= 1.0
        dx, dy = effects.shadow_offset_mm(lighting, 10.0)
        assert np.hypot(dx, dy) == pytest.approx(10.0 / np.tan(np.radians(lighting.elevation_deg)))


def test_warm_light_casts_warm() -> None:
    grey = np.full((40, 40, 3), 128, np.uint8)
    base = {"direction_deg": 0.0, "elevation_deg": 60.0, "ambient": 1.0, "gradient": 0.0, "vignette": 0.0,
            "glare": (), "shadow": 0.3}  # fmt: skip
    warm = effects.apply_lighting(grey, effects.Lighting(colour_temperature_k=3000, **base))
    cool = effects.apply_lighting(grey, effects.Lighting(colour_temperature_k=8000, **base))
    assert warm[..., 2].mean() > warm[..., 0].mean() and cool[..., 0].mean() > cool[..., 2].mean()


def test_distractors_draw_and_mask() -> None:
    rng = np.random.default_rng(6)
    img = np.full((480, 640, 3), 120, np.uint8)
    calls = [
        lambda im, m: distractors.draw_hand(im, m, rng, entry=(640, 300), tip=(300, 250), px_per_mm=1.0),
        lambda im, m: distractors.draw_phone(im, m, rng, centre=(200, 200), angle_deg=30, px_per_mm=1.0),
        lambda im, m: distractors.draw_cup(im, m, rng, centre=(400, 300), px_per_mm=1.0),
        lambda im, m: distractors.draw_score_sheet(im, m, rng, centre=(300, 240), angle_deg=-5, px_per_mm=1.0),
        lambda im, m: distractors.draw_pen(im, m, rng, centre=(320, 100), angle_deg=10, px_per_mm=1.0),
    ]
    for draw in calls:
        image, mask = img.copy(), np.zeros(img.shape[:2], np.uint8)
        draw(image, mask)
        covered = mask == 255
        assert covered.sum() > 200 and set(np.unique(mask)) <= {0, 255}
        assert np.abs(image.astype(int) - img).sum(axis=-1)[covered].mean() > 5
    skin = distractors.sample_skin(rng)
    assert len(skin) == 3 and all(0 <= c <= 255 for c in skin)
