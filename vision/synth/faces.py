"""Procedural Rummikub tile faces: one canonical upright texture per tile, for the scene composer to warp.

Why procedural: the recognition model is trained mostly on synthetic scenes and judged on real photos, so the
faces must look like real tiles (cream plastic, bevelled rim, digit in a shallow circular recess, tone-on-tone
"Rummikub" wordmark at the bottom that tells 6 from 9) while varying over many editions, so the model learns the
tile and not one font or one ink.

A :class:`TileStyle` is one table's tile set (constant across a table); ``vision.synth.editions`` describes whole
editions (modern circle, classic big-digit, travel, large-print) as ranges a TileStyle is drawn from;
:func:`render_face` adds per-tile randomness (digit offset, faded ink, scratches, dirt, noise). Styles are drawn
per split; the "train" and "heldout" splits use DISJOINT font families and DISJOINT colour sub-ranges
(interleaved hue bands), so a held-out test set measures generalisation to an unseen edition.

The font files each split may use, their packages and licences, are :mod:`vision.synth.fontfiles`.

Size: 536 lines: :class:`TileStyle` and the constants (about 80 lines), the style sampling with the colour bands
(about 90), the static layers cached per style (masks for digits, jokers and the wordmark, the bevel; about 240) and
the per-tile randomness (wear, finish; about 85). Kept as one module, just over 500 lines: every part draws from the
same :class:`TileStyle` fields. The font registry is :mod:`vision.synth.fontfiles`. Were it to grow, the masks
(``_glyph`` to ``_wordmark_mask``, about 125 lines) are the part to move out.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.synth.fontfiles import available_fonts, available_wordmark_fonts

FACE_SIZE: tuple[int, int] = (120, 160)
"""(width, height) of the canonical upright face texture, in pixels (a real tile face is about 30 x 40 mm)."""

COLOUR_NAMES: tuple[str, ...] = ("black", "red", "blue", "orange")
JOKER_VARIANTS: tuple[str, ...] = ("classic", "sun", "smiley", "outline-smiley")
"""Joker drawings: "classic" (the modern edition's smiling sun-moon), "sun", "smiley" (filled eyes) and
"outline-smiley" (the classic edition's big outlined smiling face). :func:`sample_style` draws the first three."""
DEFAULT_FACE_ASPECT = FACE_SIZE[0] / FACE_SIZE[1]

_SS = 3  # supersampling factor for glyphs and vector drawings
_ToPixel = Callable[[float, float], tuple[int, int]]


# Ink colour ranges as (hue degrees, saturation, value) intervals. Hue ranges are cut into interleaved bands:
# even bands belong to "train", odd ones to "heldout", so the splits never share an ink (or body) colour while
# both span the plausible range. Orange stays >= 24 deg and red <= 8 deg: an orange tile must never read red.
_INK_RANGES: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "black": ((0.0, 360.0), (0.05, 0.35), (0.07, 0.20)),
    "red": ((-14.0, 6.0), (0.78, 0.95), (0.70, 0.88)),
    "blue": ((198.0, 226.0), (0.80, 1.00), (0.52, 0.80)),
    "orange": ((26.0, 42.0), (0.82, 1.00), (0.88, 1.00)),
}
_BODY_RANGE = ((34.0, 54.0), (0.07, 0.20), (0.86, 0.96))
_N_BANDS = 8


@dataclass(frozen=True, slots=True)
class TileStyle:
    """Everything that defines one tile edition; constant across a table. Colours are BGR uint8 triples."""

    name: str
    split: str
    body_bgr: tuple[int, int, int]
    recess_shade: float  # recess floor brightness relative to the face (<1 darker, >1 lighter)
    recess_radius: float  # fraction of face width
    recess_centre_y: float  # fraction of face height
    recess_depth: float  # strength of the soft inner shadow, 0..1
    ink_bgr: tuple[tuple[int, int, int], ...]  # one per COLOUR_NAMES entry
    font_key: str
    font_path: str
    digit_weight: float  # extra stroke in face pixels (faux bold)
    digit_height: float  # glyph height as a fraction of face height
    two_digit_condense: float  # horizontal scale of two-digit numbers
    two_digit_gap: float  # gap between the two digits, fraction of glyph height (may be negative)
    digit_centre_y: float  # fraction of face height
    wordmark_text: str
    wordmark_font_key: str
    wordmark_font_path: str
    wordmark_strength: float  # 0..1 visibility of the tone-on-tone emboss
    wordmark_y: float  # fraction of face height of the wordmark's centre
    wordmark_width: float  # fraction of face width
    corner_radius: float  # fraction of face width
    bevel_width: float  # fraction of face width
    joker_variant: str
    joker_colour: str  # "red" or "black"
    wear: float  # 0..1, scales scratches, dirt and ink fading
    gloss: float  # 0..1, strength of the per-tile sheen
    back_variant: str  # "plain" or "dimple"
    # Fields added with the editions (vision.synth.editions); the defaults are the modern circle look that
    # sample_style draws, so the style pools of the first datasets and the bench games stay bit for bit.
    edition: str = "modern-circle"
    face_aspect: float = DEFAULT_FACE_ASPECT  # face width / height
    circle: bool = True  # a light circular recess behind the digit (recess_* fields); False: a flat face
    digit_width: float = 1.0  # horizontal scale of every glyph (below 1: condensed)
    joker_scale: float = 0.82  # joker drawing radius as a share of recess_radius
    second_joker_colour: str = ""  # a set whose two jokers differ: every other joker in this colour

    def describe(self) -> dict:
        """A JSON-ready description for the dataset sidecar."""
        out = asdict(self)
        out["ink_bgr"] = {name: list(bgr) for name, bgr in zip(COLOUR_NAMES, self.ink_bgr, strict=True)}
        out["body_bgr"] = list(self.body_bgr)
        out["font_path"] = Path(self.font_path).name
        out["wordmark_font_path"] = Path(self.wordmark_font_path).name
        return out

    def ink(self, colour: str) -> tuple[int, int, int]:
        """The BGR ink of a colour class ("black", "red", "blue", "orange")."""
        return self.ink_bgr[COLOUR_NAMES.index(colour)]


# ----------------------------------------------------------------------------------------------------------------
# Style sampling


def _band_sample(rng: np.random.Generator, lo: float, hi: float, split: str, n_bands: int = _N_BANDS) -> float:
    """A value in [lo, hi) restricted to this split's interleaved bands (even: train, odd: heldout)."""
    width = (hi - lo) / n_bands
    parity = 0 if split == "train" else 1
    band = parity + 2 * int(rng.integers(0, n_bands // 2))
    return lo + width * (band + float(rng.uniform(0.05, 0.95)))


def _hsv_to_bgr(h_deg: float, s: float, v: float) -> tuple[int, int, int]:
    hsv = np.array([[[(h_deg % 360.0) / 2.0, s * 255.0, v * 255.0]]], dtype=np.float32)
    hsv = np.clip(np.round(hsv), 0, [179, 255, 255]).astype(np.uint8)
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _sample_ink(rng: np.random.Generator, colour: str, split: str) -> tuple[int, int, int]:
    (h0, h1), (s0, s1), (v0, v1) = _INK_RANGES[colour]
    if colour == "black":  # hue barely matters for black; split by value bands instead
        return _hsv_to_bgr(float(rng.uniform(h0, h1)), float(rng.uniform(s0, s1)), _band_sample(rng, v0, v1, split, 4))
    return _hsv_to_bgr(_band_sample(rng, h0, h1, split), float(rng.uniform(s0, s1)), float(rng.uniform(v0, v1)))


def sample_style(rng: np.random.Generator, split: str = "train", fonts: str = "base") -> TileStyle:
    """Draw one tile edition for a split; fonts and colour bands never overlap between "train" and "heldout"."""
    digit_fonts = available_fonts(split, fonts)
    font_key, font_path = digit_fonts[int(rng.integers(len(digit_fonts)))]
    marks = available_wordmark_fonts(split)
    mark_key, mark_path = marks[int(rng.integers(len(marks)))]
    (bh0, bh1), (bs0, bs1), (bv0, bv1) = _BODY_RANGE
    body = _hsv_to_bgr(_band_sample(rng, bh0, bh1, split), float(rng.uniform(bs0, bs1)), float(rng.uniform(bv0, bv1)))
    if rng.random() < 0.15:  # some sets are nearly white
        body = _hsv_to_bgr(
            _band_sample(rng, bh0, bh1, split), float(rng.uniform(0.02, 0.07)), float(rng.uniform(0.9, 0.97))
        )
    inks = tuple(_sample_ink(rng, c, split) for c in COLOUR_NAMES)
    condensed_font = any(word in font_key for word in ("condensed", "narrow", "fjalla"))
    fields: dict[str, Any] = {
        "split": split,
        "body_bgr": body,
        "recess_shade": float(rng.uniform(0.985, 1.04)),
        "recess_radius": float(rng.uniform(0.34, 0.42)),
        "recess_centre_y": float(rng.uniform(0.37, 0.43)),
        "recess_depth": float(rng.uniform(0.3, 1.0)),
        "ink_bgr": inks,
        "font_key": font_key,
        "font_path": font_path,
        "digit_weight": float(rng.uniform(0.0, 1.2)),
        "digit_height": float(rng.uniform(0.27, 0.34)),
        "two_digit_condense": float(rng.uniform(0.85, 1.0) if condensed_font else rng.uniform(0.68, 0.86)),
        "two_digit_gap": float(rng.uniform(-0.03, 0.06)),
        "digit_centre_y": float(rng.uniform(-0.015, 0.015)),  # relative to the recess centre
        "wordmark_text": str(rng.choice(["Rummikub", "Rummikub", "Rummikub", "Rummy", "Rummi"])),
        "wordmark_font_key": mark_key,
        "wordmark_font_path": mark_path,
        "wordmark_strength": float(rng.uniform(0.35, 1.0)),
        "wordmark_y": float(rng.uniform(0.80, 0.86)),
        "wordmark_width": float(rng.uniform(0.5, 0.68)),
        "corner_radius": float(rng.uniform(0.06, 0.14)),
        "bevel_width": float(rng.uniform(0.035, 0.075)),
        "joker_variant": str(rng.choice(JOKER_VARIANTS[:3], p=[0.6, 0.25, 0.15])),
        "joker_colour": str(rng.choice(["red", "black"])),
        "wear": float(rng.beta(1.5, 4.0)),
        "gloss": float(rng.uniform(0.0, 1.0)),
        "back_variant": str(rng.choice(["plain", "dimple"])),
    }
    return TileStyle(name=f"{split}-{font_key}-{style_digest(fields)}", **fields)


def style_digest(fields: dict[str, Any]) -> str:
    """A style's short hash, which also seeds its faces' wear and noise: font files by name only, so a style
    renders the same wherever the fonts are installed (a PyPI font lives in the virtual environment's folder)."""
    portable = {k: Path(v).name if k.endswith("font_path") else v for k, v in fields.items()}
    return hashlib.sha1(repr(sorted(portable.items())).encode()).hexdigest()[:8]


def face_size(style: TileStyle) -> tuple[int, int]:
    """(width, height) of a style's face texture: FACE_SIZE's height, the edition's aspect."""
    return max(8, round(FACE_SIZE[1] * style.face_aspect)), FACE_SIZE[1]


def side_colour(style: TileStyle) -> tuple[int, int, int]:
    """BGR of the tile's side walls: the same plastic, darker and a little yellower (they face away from the light)."""
    b, g, r = style.body_bgr
    return int(b * 0.78), int(g * 0.83), int(r * 0.86)


# ----------------------------------------------------------------------------------------------------------------
# Static layers, cached per style


def _rounded_rect_alpha(width: int, height: int, radius: float, inset: float = 0.0) -> np.ndarray:
    """Anti-aliased float32 [0,1] mask of a rounded rectangle (drawn supersampled)."""
    s = _SS
    canvas = np.zeros((height * s, width * s), np.uint8)
    x0, y0 = inset * s, inset * s
    x1, y1 = (width - inset) * s - 1, (height - inset) * s - 1
    r = max(1.0, radius * s)
    image = Image.fromarray(canvas)
    ImageDraw.Draw(image).rounded_rectangle((x0, y0, x1, y1), radius=r, fill=255)
    small = cv2.resize(np.asarray(image), (width, height), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 255.0


def _circle_alpha(width: int, height: int, centre: tuple[float, float], radius: float) -> np.ndarray:
    s = _SS
    canvas = np.zeros((height * s, width * s), np.uint8)
    cx, cy = centre
    cv2.circle(canvas, (round(cx * s), round(cy * s)), round(radius * s), 255, -1, cv2.LINE_AA)
    return cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def _shift(mask: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
    return cv2.warpAffine(
        mask, m, (mask.shape[1], mask.shape[0]), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


@functools.lru_cache(maxsize=64)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


@functools.lru_cache(maxsize=4096)
def _glyph(path: str, char: str, weight_ss: int) -> np.ndarray:
    """Tight uint8 mask of one character, rendered large (cap height ~ 300 px) so later resizes only shrink."""
    font = _font(path, 400)
    left, top, right, bottom = font.getbbox(char, stroke_width=weight_ss)
    image = Image.new("L", (int(right - left + 4), int(bottom - top + 4)), 0)
    ImageDraw.Draw(image).text((2 - left, 2 - top), char, font=font, fill=255, stroke_width=weight_ss, stroke_fill=255)
    arr = np.asarray(image)
    ys, xs = np.nonzero(arr > 8)
    return np.ascontiguousarray(arr[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def _number_mask(style: TileStyle, text: str) -> np.ndarray:
    """Float32 [0,1] ink mask (face size) of a number centred in the recess."""
    width, height = face_size(style)
    s = _SS
    target_h = style.digit_height * height * s
    weight_ss = round(style.digit_weight * 400 / (style.digit_height * height))
    glyphs = [_glyph(style.font_path, ch, weight_ss) for ch in text]
    condense = style.two_digit_condense if len(text) > 1 else 1.0
    scaled = []
    for g in glyphs:
        k = target_h / g.shape[0]
        w = max(1, round(g.shape[1] * k * condense * style.digit_width))
        scaled.append(cv2.resize(g, (w, round(target_h)), interpolation=cv2.INTER_AREA))
    gap = round(style.two_digit_gap * target_h)
    total_w = sum(g.shape[1] for g in scaled) + gap * (len(scaled) - 1)
    canvas = np.zeros((height * s, width * s), np.float32)
    cx = width * s / 2
    cy = (style.recess_centre_y + style.digit_centre_y) * height * s
    x = round(cx - total_w / 2)
    y = round(cy - target_h / 2)
    for g in scaled:
        x0, x1 = max(0, x), min(width * s, x + g.shape[1])
        canvas[y : y + g.shape[0], x0:x1] = np.maximum(canvas[y : y + g.shape[0], x0:x1], g[:, x0 - x : x1 - x])
        x += g.shape[1] + gap
    return cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA) / 255.0


def _joker_mask(style: TileStyle) -> np.ndarray:
    """Float32 [0,1] mask of the joker drawing: a face in a ring, like the real tile's smiling sun-moon."""
    width, height = face_size(style)
    s = 4
    canvas = np.zeros((height * s, width * s), np.uint8)
    cx, cy = width * s / 2, style.recess_centre_y * height * s
    r = style.recess_radius * width * s * style.joker_scale
    lw = max(2, round(r * 0.12))
    aa = cv2.LINE_AA

    def pt(u: float, v: float) -> tuple[int, int]:
        return round(cx + u * r), round(cy + v * r)

    def ax(a: float, b: float) -> tuple[int, int]:
        return round(a * r), round(b * r)

    thin = max(2, round(lw * 0.7))
    if style.joker_variant == "sun":
        for ray in range(12):  # rays around a smaller ring
            a = 2 * math.pi * ray / 12
            p0 = pt(0.78 * math.cos(a), 0.78 * math.sin(a))
            p1 = pt(1.0 * math.cos(a), 1.0 * math.sin(a))
            cv2.line(canvas, p0, p1, 255, thin, aa)
        ring_r = 0.72
    else:
        ring_r = 1.0
    if style.joker_variant == "outline-smiley":  # the classic edition: everything drawn in outline
        _outline_smiley(canvas, pt, ax, r, lw)
        return cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    cv2.circle(canvas, pt(0, 0), round(r * ring_r - lw / 2), 255, lw, aa)
    k = ring_r
    if style.joker_variant == "smiley":
        cv2.circle(canvas, pt(-0.32 * k, -0.22 * k), round(0.1 * k * r), 255, -1, aa)
        cv2.circle(canvas, pt(0.32 * k, -0.22 * k), round(0.1 * k * r), 255, -1, aa)
        cv2.ellipse(canvas, pt(0, 0.05 * k), ax(0.48 * k, 0.42 * k), 0, 20, 160, 255, lw, aa)
    else:
        for side in (-1, 1):
            # brow, almond eye with pupil, cheek line
            cv2.ellipse(canvas, pt(side * 0.33 * k, -0.28 * k), ax(0.22 * k, 0.1 * k), 0, 200, 340, 255, thin, aa)
            cv2.ellipse(canvas, pt(side * 0.33 * k, -0.12 * k), ax(0.2 * k, 0.08 * k), 0, 0, 360, 255, thin, aa)
            cv2.circle(canvas, pt(side * 0.30 * k, -0.12 * k), round(0.055 * k * r), 255, -1, aa)
            cv2.ellipse(canvas, pt(side * 0.42 * k, 0.22 * k), ax(0.14 * k, 0.1 * k), 0, 90, 200, 255, thin, aa)
        cv2.line(canvas, pt(0, -0.1 * k), pt(-0.07 * k, 0.22 * k), 255, thin, aa)  # nose
        cv2.line(canvas, pt(-0.07 * k, 0.22 * k), pt(0.05 * k, 0.24 * k), 255, thin, aa)
        cv2.ellipse(canvas, pt(0, 0.18 * k), ax(0.5 * k, 0.36 * k), 0, 25, 155, 255, lw, aa)  # smile
        cv2.ellipse(canvas, pt(0, 0.43 * k), ax(0.12 * k, 0.05 * k), 0, 0, 180, 255, thin, aa)  # chin
    return cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def _outline_smiley(canvas: np.ndarray, pt: _ToPixel, ax: _ToPixel, r: float, lw: int) -> None:
    """The classic edition's joker: a round face outline, hollow oval eyes, a hollow grin, ears of a jester."""
    aa = cv2.LINE_AA
    thin = max(2, round(lw * 0.8))
    cv2.circle(canvas, pt(0, 0), round(r - lw / 2), 255, lw, aa)
    for side in (-1, 1):
        cv2.ellipse(canvas, pt(side * 0.32, -0.2), ax(0.12, 0.19), 0, 0, 360, 255, thin, aa)  # hollow eye
        cv2.circle(canvas, pt(side * 0.30, -0.14), round(0.05 * r), 255, -1, aa)  # pupil
        cv2.ellipse(canvas, pt(side * 0.34, -0.47), ax(0.14, 0.06), 0, 200, 340, 255, thin, aa)  # brow
    # grin: an upper and a lower arc closed at the corners, the mouth left hollow
    cv2.ellipse(canvas, pt(0, 0.12), ax(0.52, 0.18), 0, 0, 180, 255, thin, aa)
    cv2.ellipse(canvas, pt(0, 0.12), ax(0.52, 0.46), 0, 0, 180, 255, thin, aa)
    cv2.line(canvas, pt(-0.52, 0.12), pt(-0.60, 0.04), 255, thin, aa)  # dimples
    cv2.line(canvas, pt(0.52, 0.12), pt(0.60, 0.04), 255, thin, aa)


def _wordmark_mask(style: TileStyle) -> np.ndarray:
    """Float32 [0,1] mask of the wordmark, bottom-centred."""
    width, height = face_size(style)
    s = _SS
    font = _font(style.wordmark_font_path, 120)
    left, top, right, bottom = font.getbbox(style.wordmark_text)
    image = Image.new("L", (int(right - left + 8), int(bottom - top + 8)), 0)
    ImageDraw.Draw(image).text((4 - left, 4 - top), style.wordmark_text, font=font, fill=255)
    arr = np.asarray(image)
    target_w = style.wordmark_width * width * s
    k = target_w / arr.shape[1]
    word = cv2.resize(
        arr, (round(arr.shape[1] * k), max(1, round(arr.shape[0] * k * 1.15))), interpolation=cv2.INTER_AREA
    )
    canvas = np.zeros((height * s, width * s), np.float32)
    y = round(style.wordmark_y * height * s - word.shape[0] / 2)
    x = round(width * s / 2 - word.shape[1] / 2)
    canvas[y : y + word.shape[0], x : x + word.shape[1]] = word
    return cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA) / 255.0


@dataclass(frozen=True, slots=True)
class _Static:
    """Per-style layers that never change between tiles of one edition."""

    alpha: np.ndarray  # (H, W) float32
    face: np.ndarray  # (H, W, 3) float32 BGR 0..255, number tiles (recess + wordmark)
    back: np.ndarray  # (H, W, 3) float32 BGR, face-down
    recess: np.ndarray  # (H, W) float32 recess mask (where ink sits)


def _bevel_shading(alpha: np.ndarray, inner: np.ndarray, light: tuple[float, float]) -> np.ndarray:
    """Brightness offsets on the chamfered rim: faces toward the light get lighter, others darker."""
    band = np.clip(alpha - inner, 0.0, 1.0)
    gx = cv2.Sobel(inner, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(inner, cv2.CV_32F, 0, 1, ksize=3)
    gx = cv2.GaussianBlur(gx, (0, 0), 2.0)
    gy = cv2.GaussianBlur(gy, (0, 0), 2.0)
    norm = np.sqrt(gx * gx + gy * gy) + 1e-6
    facing = (gx * light[0] + gy * light[1]) / norm  # inward normal dot light
    return band * facing


def _build_static(style: TileStyle) -> _Static:
    width, height = face_size(style)
    radius = style.corner_radius * width
    bevel = style.bevel_width * width
    alpha = _rounded_rect_alpha(width, height, radius)
    inner = _rounded_rect_alpha(width, height, max(1.0, radius - bevel * 0.6), inset=bevel)
    body = np.array(style.body_bgr, np.float32)
    base = np.empty((height, width, 3), np.float32)
    base[:] = body
    # faint large-scale moulding unevenness, fixed per edition
    yy = np.arange(height, dtype=np.float32)[:, None, None]
    base *= 1.0 + 0.012 * (yy / height - 0.5)
    shade = _bevel_shading(alpha, inner, (0.6, 0.8))  # light from top-left: inward normals point down-right
    rim = 1.0 + 0.16 * shade - 0.03 * np.clip(alpha - inner, 0, 1)
    back = base * rim[..., None]

    if style.circle:
        centre = (width / 2, style.recess_centre_y * height)
        rad = style.recess_radius * width
        circle = _circle_alpha(width, height, centre, rad)
        d = 1.2 + 1.3 * style.recess_depth
        inner_shadow = circle * cv2.GaussianBlur(1.0 - _shift(circle, d, d), (0, 0), 1.4)
        inner_light = circle * cv2.GaussianBlur(1.0 - _shift(circle, -d, -d), (0, 0), 1.4)
        outer_lip = np.clip(_shift(circle, -0.8, -0.8) - circle, 0, 1)
        recess_gain = 1.0 + (style.recess_shade - 1.0) * circle
        recess_gain -= 0.13 * style.recess_depth * inner_shadow
        recess_gain += 0.05 * style.recess_depth * inner_light + 0.03 * outer_lip
        face = back * recess_gain[..., None]
    else:
        circle = np.zeros((height, width), np.float32)
        face = back.copy()

    mark = _wordmark_mask(style)
    m = style.wordmark_strength
    tan = np.array([0.80, 0.87, 0.94], np.float32)  # the wordmark reads slightly darker and yellower
    emboss = _shift(mark, -0.7, -0.7) - _shift(mark, 0.7, 0.7)
    face = face * (1.0 - (1.0 - tan) * (m * 0.9) * mark[..., None]) * (1.0 + 0.05 * m * emboss)[..., None]

    if style.back_variant == "dimple":  # ejector-pin mark in the middle of the back
        dimple = _circle_alpha(width, height, (width / 2, height / 2), width * 0.06)
        back = back * (1.0 - 0.04 * cv2.GaussianBlur(dimple, (0, 0), 1.0))[..., None]
    return _Static(alpha=alpha, face=face, back=back, recess=circle)


@functools.lru_cache(maxsize=256)
def _static(style: TileStyle) -> _Static:
    return _build_static(style)


@functools.lru_cache(maxsize=4096)
def _ink_mask(style: TileStyle, label: str) -> np.ndarray:
    if label == "joker":
        return _joker_mask(style)
    return _number_mask(style, label.partition("-")[2])


# ----------------------------------------------------------------------------------------------------------------
# Per-tile randomness


def _wear(img: np.ndarray, ink: np.ndarray, style: TileStyle, rng: np.random.Generator) -> np.ndarray:
    """Scratches and dirt specks on the face, chipped/faded ink; returns the adjusted ink mask."""
    height, width = ink.shape
    wear = style.wear
    delta = np.zeros_like(img)  # drawn additively: cv2 draws absolute values
    n_scratches = int(rng.poisson(0.5 + 3.0 * wear))
    for _ in range(n_scratches):
        x0, y0 = rng.uniform(0, width), rng.uniform(0, height)
        a = rng.uniform(0, math.pi)
        length = rng.uniform(6, 30)
        x1, y1 = x0 + length * math.cos(a), y0 + length * math.sin(a)
        tone = float(rng.uniform(-18, 10)) * (0.4 + wear)
        cv2.line(delta, (round(x0), round(y0)), (round(x1), round(y1)), (tone, tone, tone), 1, cv2.LINE_AA)
    n_specks = int(rng.poisson(0.5 + 6.0 * wear))
    for _ in range(n_specks):
        c = (round(rng.uniform(0, width)), round(rng.uniform(0, height)))
        tone = float(-rng.uniform(15, 70))
        cv2.circle(delta, c, int(rng.integers(0, 2)), (tone, tone * 0.95, tone * 0.9), -1, cv2.LINE_AA)
    img += delta
    fade = 1.0 - wear * float(rng.uniform(0.0, 0.25))
    ink = ink * fade
    if wear > 0.3 and rng.random() < wear:  # a chip of missing ink
        chip = np.zeros_like(ink)
        cx, cy = rng.uniform(width * 0.3, width * 0.7), rng.uniform(height * 0.25, height * 0.55)
        cv2.circle(chip, (round(cx), round(cy)), 1, 1.0, -1, cv2.LINE_AA)
        ink = ink * (1.0 - 0.5 * chip)
    return ink


def _finish(colour: np.ndarray, alpha: np.ndarray, style: TileStyle, rng: np.random.Generator) -> np.ndarray:
    """Sheen, sensor-independent surface noise, quantise to BGRA uint8."""
    height, width = alpha.shape
    if style.gloss > 0.05:
        a = rng.uniform(0, 2 * math.pi)
        yy = np.linspace(-0.5, 0.5, height, dtype=np.float32)[:, None]
        xx = np.linspace(-0.5, 0.5, width, dtype=np.float32)[None, :]
        ramp = xx * math.cos(a) + yy * math.sin(a)
        colour = colour * (1.0 + style.gloss * float(rng.uniform(0.0, 0.08)) * ramp)[..., None]
    noise = rng.standard_normal((height, width, 1), dtype=np.float32) * float(rng.uniform(0.8, 2.5))
    colour = colour + noise
    out = np.empty((height, width, 4), np.uint8)
    out[..., :3] = np.clip(colour, 0, 255)
    out[..., 3] = np.clip(alpha * 255.0 + 0.5, 0, 255)
    return out


def render_face(
    label: str, style: TileStyle, rng: np.random.Generator, *, joker_colour: str | None = None
) -> np.ndarray:
    """(160, 120, 4) uint8 BGRA face of one tile, upright (digit reads normally, wordmark at the bottom).

    ``label`` is one of ``referee.tiles.ALL_LABELS`` ("black-7", "red-13", "joker"). Alpha is the anti-aliased
    rounded body; per-tile wear, digit offset and noise come from ``rng``. ``joker_colour`` overrides the
    style's joker colour (the classic edition prints one red and one black joker).
    """
    static = _static(style)
    if label == "joker":
        ink_bgr = style.ink(joker_colour or style.joker_colour)
    else:
        colour, _, number = label.partition("-")
        if colour not in COLOUR_NAMES or not number.isdigit() or not 1 <= int(number) <= 13:
            raise ValueError(f"unknown tile label {label!r}")
        ink_bgr = style.ink(colour)
    ink = _ink_mask(style, label)
    dx, dy = rng.normal(0.0, 0.7, size=2)
    ink = _shift(ink, float(dx), float(dy)) if abs(dx) + abs(dy) > 0.15 else ink
    img = static.face.copy()
    ink = _wear(img, ink, style, rng)
    # ink tint varies a little per tile (batch, fading), and darkens slightly at stroke edges (paint pooling)
    tint = np.array(ink_bgr, np.float32) * (1.0 + rng.normal(0.0, 0.03, 3)).astype(np.float32)
    edge = ink * (1.0 - ink) * 4.0
    ink_col = tint[None, None, :] * (1.0 - 0.12 * edge)[..., None]
    a = ink[..., None]
    img = img * (1.0 - a) + ink_col * a
    return _finish(img, static.alpha, style, rng)


def render_back(style: TileStyle, rng: np.random.Generator) -> np.ndarray:
    """(160, 120, 4) uint8 BGRA face-down tile: plain body with the bevelled rim, a little wear and noise."""
    static = _static(style)
    img = static.back.copy()
    _wear(img, np.zeros(static.alpha.shape, np.float32), style, rng)
    return _finish(img, static.alpha, style, rng)
