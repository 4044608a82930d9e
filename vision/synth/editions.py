"""Tile editions as data: what a set of Rummikub tiles looks like, as ranges a table's style is drawn from.

Real clubs play with several editions. The training photos show the *modern circle* edition (digit in a light
circular recess, wordmark under it); the European "Original" sets are the *classic* edition (tall cream tiles,
large bold condensed digits filling most of the face, no circle, deep blue / red / red-orange / black inks, the
brand embossed small under the digit, jokers an outlined smiling face, one red and one black). An
:class:`Edition` holds the ranges of everything that tells editions apart; :func:`sample_edition_style` draws one
table's :class:`~vision.synth.faces.TileStyle` from it (per-table jitter inside the ranges), and :func:`blend`
makes a random edition between two named ones.

Held out for validation (never drawn in the "train" split):

* the whole ``large-print`` edition (rounded digits in a large circle, wide rounded tiles);
* every held-out font (``fontfiles.font_keys("heldout")``) in every edition, and the odd hue bands of the inks and
  bodies (as for the legacy styles: ``faces._band_sample``).

So ``classic`` renders in both splits: with its train fonts (Roboto Condensed, Liberation Sans Narrow, DejaVu Sans
Condensed, Open Sans Condensed, Roboto squeezed) for training, with held-out fonts (PT Sans Narrow, Fjalla One,
FreeSans and Source Sans Pro squeezed) for measuring how the classic look is read on fonts never trained on.

Editions print some colours differently (yellow for orange, teal for blue in ``travel``): the labels stay the four
colour classes (``faces.COLOUR_NAMES``); the ink range of a class is what that edition prints for it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from vision.synth import faces, fontfiles

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class HsvRange:
    """A colour range: hue in degrees (may run below 0 for reds), saturation and value 0..1."""

    hue_deg: Range
    saturation: Range
    value: Range


@dataclass(frozen=True, slots=True)
class Inks:
    """What an edition prints for each colour class (the label stays the class, whatever the hue)."""

    black: HsvRange
    red: HsvRange
    blue: HsvRange
    orange: HsvRange

    def of(self, colour: str) -> HsvRange:
        return getattr(self, colour)


@dataclass(frozen=True, slots=True)
class Mark:
    """The brand name moulded into the face under the digit (tone on tone)."""

    texts: tuple[str, ...]
    strength: Range  # 0..1 visibility
    y: Range  # centre, share of face height
    width: Range  # share of face width


@dataclass(frozen=True, slots=True)
class Circle:
    """The light circular recess behind the digit (modern editions); ``None`` on an Edition means a flat face."""

    radius: Range  # share of face width
    centre_y: Range  # share of face height
    shade: Range  # floor brightness relative to the face
    depth: Range  # 0..1 strength of the inner shadow


@dataclass(frozen=True, slots=True)
class Edition:
    """One tile set's look as ranges; a table draws one TileStyle from it (:func:`sample_edition_style`)."""

    name: str
    held_out: bool  # True: never drawn in the "train" split (a validation edition)
    body: HsvRange  # the plastic
    face_aspect: Range  # face width / height (0.75: the 27 x 36 mm modern tile)
    corner_radius: Range  # share of face width
    bevel_width: Range  # share of face width
    train_fonts: tuple[str, ...]  # digit font keys for the "train" split (fontfiles.font_keys("train"))
    heldout_fonts: tuple[str, ...]  # digit font keys for the "heldout" split
    digit_weight: Range  # extra stroke, face pixels (faux bold)
    digit_width: Range  # horizontal scale of each glyph (below 1: condensed); condensed fonts x CONDENSED_WIDEN
    digit_height: Range  # glyph height, share of face height
    digit_centre_y: Range  # glyph centre, share of face height, on a flat face (a circle centres the digit)
    two_digit_condense: Range  # extra horizontal scale of 10-13
    two_digit_gap: Range  # gap between two digits, share of glyph height
    circle: Circle | None
    inks: Inks
    joker_variants: tuple[str, ...]  # faces.JOKER_VARIANTS
    joker_colours: tuple[str, ...]  # one: every joker so; two: the set's two jokers differ
    joker_scale: Range  # joker radius, share of face width (legacy: 0.82 x the circle's radius)
    mark: Mark
    wear: Range
    gloss: Range


CONDENSED_WIDEN = 1.15
"""Condensed and narrow fonts are drawn this much wider than ``digit_width`` says, so an edition's digits keep
their proportions whichever font a table draws (the classic digits are about 0.65 as wide as tall)."""
CONDENSED_WORDS = ("condensed", "narrow", "fjalla")

MIX = "mix"
"""Recipe name for a random edition between two of the recipe's named editions (:func:`blend`)."""


def _hsv(h: Range, s: Range, v: Range) -> HsvRange:
    return HsvRange(h, s, v)


MODERN_CIRCLE = Edition(
    name="modern-circle",
    held_out=False,
    body=_hsv((34.0, 54.0), (0.07, 0.20), (0.86, 0.96)),
    face_aspect=(0.75, 0.75),
    corner_radius=(0.06, 0.14),
    bevel_width=(0.035, 0.075),
    train_fonts=(
        "dejavu-sans-bold",
        "liberation-sans-bold",
        "roboto-bold",
        "roboto-black",
        "lato-bold",
        "lato-black",
        "open-sans-bold",
        "inter-bold",
        "cantarell-bold",
        "league-spartan-bold",
    ),
    heldout_fonts=("freesans-bold", "source-sans-pro-bold", "source-sans-pro-black"),
    digit_weight=(0.0, 1.2),
    digit_width=(1.0, 1.0),
    digit_height=(0.27, 0.34),
    digit_centre_y=(0.37, 0.43),
    two_digit_condense=(0.68, 0.86),
    two_digit_gap=(-0.03, 0.06),
    circle=Circle(radius=(0.34, 0.42), centre_y=(0.37, 0.43), shade=(0.985, 1.04), depth=(0.3, 1.0)),
    inks=Inks(
        black=_hsv((0.0, 360.0), (0.05, 0.35), (0.07, 0.20)),
        red=_hsv((-14.0, 6.0), (0.78, 0.95), (0.70, 0.88)),
        blue=_hsv((198.0, 226.0), (0.80, 1.00), (0.52, 0.80)),
        orange=_hsv((26.0, 42.0), (0.82, 1.00), (0.88, 1.00)),
    ),
    joker_variants=("classic", "sun", "smiley"),
    joker_colours=("red",),
    joker_scale=(0.28, 0.34),
    mark=Mark(texts=("Rummikub",), strength=(0.35, 1.0), y=(0.80, 0.86), width=(0.5, 0.68)),
    wear=(0.0, 0.45),
    gloss=(0.0, 1.0),
)
"""The training photos' edition: what the legacy style pools draw (scene.style_pool), as an Edition."""

CLASSIC = Edition(
    name="classic",
    held_out=False,
    body=_hsv((36.0, 52.0), (0.03, 0.12), (0.90, 0.98)),
    face_aspect=(0.69, 0.74),
    corner_radius=(0.07, 0.12),
    bevel_width=(0.035, 0.06),
    train_fonts=(
        "roboto-condensed-bold",
        "liberation-sans-narrow-bold",
        "dejavu-sans-condensed-bold",
        "open-sans-condensed-bold",
        "roboto-bold",
    ),
    heldout_fonts=("pt-sans-narrow-bold", "fjalla-one", "freesans-bold", "source-sans-pro-bold"),
    digit_weight=(0.5, 1.6),
    digit_width=(0.80, 0.92),
    digit_height=(0.55, 0.65),
    digit_centre_y=(0.38, 0.43),
    two_digit_condense=(0.70, 0.84),
    two_digit_gap=(-0.04, 0.03),
    circle=None,
    inks=Inks(
        black=_hsv((0.0, 360.0), (0.05, 0.30), (0.05, 0.16)),
        red=_hsv((-8.0, 5.0), (0.85, 1.00), (0.72, 0.92)),
        blue=_hsv((208.0, 226.0), (0.80, 1.00), (0.45, 0.80)),
        orange=_hsv((17.0, 30.0), (0.75, 1.00), (0.78, 1.00)),  # red-orange; some sets look copper
    ),
    joker_variants=("outline-smiley",),
    joker_colours=("red", "black"),
    joker_scale=(0.36, 0.42),
    mark=Mark(texts=("Rummikub",), strength=(0.2, 0.6), y=(0.86, 0.91), width=(0.40, 0.55)),
    wear=(0.0, 0.5),
    gloss=(0.2, 1.0),
)
"""The European "Original" sets: tall cream tiles, big bold condensed digits, no circle, red-orange orange."""

TRAVEL = Edition(
    name="travel",
    held_out=False,
    body=_hsv((30.0, 60.0), (0.02, 0.10), (0.86, 0.96)),
    face_aspect=(0.72, 0.80),
    corner_radius=(0.10, 0.16),
    bevel_width=(0.03, 0.05),
    train_fonts=("dejavu-sans-bold", "liberation-sans-bold", "roboto-bold", "lato-black", "inter-black"),
    heldout_fonts=("freesans-bold", "source-sans-pro-bold"),
    digit_weight=(0.3, 1.2),
    digit_width=(0.9, 1.05),
    digit_height=(0.40, 0.50),
    digit_centre_y=(0.40, 0.46),
    two_digit_condense=(0.70, 0.85),
    two_digit_gap=(-0.02, 0.05),
    circle=None,
    inks=Inks(
        black=_hsv((0.0, 360.0), (0.05, 0.30), (0.06, 0.20)),
        red=_hsv((-10.0, 6.0), (0.80, 1.00), (0.72, 0.92)),
        blue=_hsv((176.0, 192.0), (0.75, 1.00), (0.48, 0.72)),  # teal
        orange=_hsv((44.0, 54.0), (0.85, 1.00), (0.85, 1.00)),  # yellow
    ),
    joker_variants=("sun", "smiley"),
    joker_colours=("red", "black"),
    joker_scale=(0.30, 0.36),
    mark=Mark(texts=("Rummikub", "Rummi"), strength=(0.2, 0.7), y=(0.84, 0.90), width=(0.40, 0.55)),
    wear=(0.0, 0.5),
    gloss=(0.0, 0.8),
)
"""A compact travel set: smaller wider tiles, mid-size digits, no circle, yellow for orange and teal for blue."""

ROUNDED = Edition(
    name="rounded",
    held_out=False,
    body=_hsv((32.0, 56.0), (0.03, 0.14), (0.86, 0.97)),
    face_aspect=(0.74, 0.82),
    corner_radius=(0.12, 0.20),
    bevel_width=(0.04, 0.08),
    train_fonts=(
        "mplus1-black",
        "mplus2-black",
        "manrope-extrabold",
        "quicksand-bold",
        "comic-neue-bold",
        "oxygen-sans-bold",
        "comfortaa-bold",
        "league-spartan-black",
    ),
    heldout_fonts=("source-sans-pro-black",),
    digit_weight=(1.4, 3.6),
    digit_width=(0.95, 1.12),
    digit_height=(0.40, 0.54),
    digit_centre_y=(0.40, 0.45),
    two_digit_condense=(0.62, 0.80),
    two_digit_gap=(-0.05, 0.03),
    circle=None,
    inks=Inks(
        black=_hsv((0.0, 360.0), (0.05, 0.30), (0.05, 0.18)),
        red=_hsv((-10.0, 6.0), (0.80, 1.00), (0.70, 0.95)),
        blue=_hsv((200.0, 230.0), (0.80, 1.00), (0.50, 0.82)),
        orange=_hsv((22.0, 40.0), (0.85, 1.00), (0.85, 1.00)),
    ),
    joker_variants=("smiley", "classic", "outline-smiley"),
    joker_colours=("red", "black"),
    joker_scale=(0.32, 0.40),
    mark=Mark(texts=("Rummikub", "Rummi"), strength=(0.2, 0.6), y=(0.85, 0.91), width=(0.40, 0.55)),
    wear=(0.0, 0.4),
    gloss=(0.1, 1.0),
)
"""Heavy rounded or geometric digits (M+ Black, Manrope, Quicksand, Comic Neue and Oxygen made heavy, Comfortaa, League
Spartan Black), whose 6 and 9 close almost to an 8, on a flat face: taught so that a never-seen heavy font is read by
shape, not by one family's counters. A training edition (no held-out recipe names it: its held-out font is there only
so that every edition renders in both splits); large-print (rounded too, in a circle, its own fonts) stays held out."""

LARGE_PRINT = Edition(
    name="large-print",
    held_out=True,
    body=_hsv((38.0, 58.0), (0.04, 0.16), (0.86, 0.96)),
    face_aspect=(0.76, 0.82),
    corner_radius=(0.15, 0.22),
    bevel_width=(0.06, 0.09),
    train_fonts=(),
    heldout_fonts=("dosis-extrabold", "dosis-bold", "source-sans-pro-black"),
    digit_weight=(1.0, 2.2),
    digit_width=(1.0, 1.12),
    digit_height=(0.44, 0.52),
    digit_centre_y=(0.41, 0.45),
    two_digit_condense=(0.64, 0.78),
    two_digit_gap=(-0.04, 0.02),
    circle=Circle(radius=(0.44, 0.47), centre_y=(0.41, 0.45), shade=(1.02, 1.06), depth=(0.2, 0.6)),
    inks=Inks(
        black=_hsv((0.0, 360.0), (0.05, 0.30), (0.05, 0.16)),
        red=_hsv((-6.0, 6.0), (0.85, 1.00), (0.75, 0.95)),
        blue=_hsv((212.0, 232.0), (0.85, 1.00), (0.55, 0.85)),
        orange=_hsv((24.0, 36.0), (0.90, 1.00), (0.90, 1.00)),
    ),
    joker_variants=("smiley", "outline-smiley"),
    joker_colours=("black", "red"),
    joker_scale=(0.34, 0.40),
    mark=Mark(texts=("Rummikub",), strength=(0.2, 0.6), y=(0.87, 0.92), width=(0.40, 0.52)),
    wear=(0.0, 0.3),
    gloss=(0.2, 1.0),
)
"""A large-print set for poor eyesight: wide rounded tiles, big rounded digits in a big circle. Held out."""

EDITIONS: dict[str, Edition] = {e.name: e for e in (MODERN_CIRCLE, CLASSIC, TRAVEL, ROUNDED, LARGE_PRINT)}
EDITION_NAMES: tuple[str, ...] = tuple(EDITIONS)
HELD_OUT_EDITIONS: frozenset[str] = frozenset(name for name, e in EDITIONS.items() if e.held_out)


def check_editions(names: tuple[str, ...], split: str) -> str | None:
    """None when a recipe may draw these editions in this split, else one line saying why not."""
    if not names:
        return None
    known = (*EDITION_NAMES, MIX)
    for name in names:
        if name not in known:
            return f"unknown edition {name!r} (known: {', '.join(known)})"
    if split == "train" and (held := sorted(set(names) & HELD_OUT_EDITIONS)):
        return f"edition(s) {', '.join(held)} are held out for validation: not in the train split"
    if names == (MIX,):
        return f"{MIX} blends the recipe's named editions: name at least one beside it"
    return None


# ----------------------------------------------------------------------------------------------------------------
# Random editions between named ones


def _lerp(a: Range, b: Range, t: float) -> Range:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def _lerp_hsv(a: HsvRange, b: HsvRange, t: float) -> HsvRange:
    return HsvRange(_lerp(a.hue_deg, b.hue_deg, t), _lerp(a.saturation, b.saturation, t), _lerp(a.value, b.value, t))


def blend(a: Edition, b: Edition, t: float) -> Edition:
    """An edition ``t`` of the way from ``a`` to ``b``: ranges interpolated, the rest (fonts, circle, jokers,
    mark texts) from the nearer one. Held out when either is."""
    near = a if t < 0.5 else b
    values: dict[str, Any] = {}
    for f in fields(Edition):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, HsvRange):
            values[f.name] = _lerp_hsv(x, y, t)
        elif isinstance(x, tuple) and len(x) == 2 and all(isinstance(v, float) for v in (*x, *y)):
            values[f.name] = _lerp(x, y, t)
        else:
            values[f.name] = getattr(near, f.name)
    values["inks"] = Inks(**{c: _lerp_hsv(a.inks.of(c), b.inks.of(c), t) for c in faces.COLOUR_NAMES})
    if a.circle is not None and b.circle is not None:
        values["circle"] = Circle(
            *(_lerp(getattr(a.circle, n), getattr(b.circle, n), t) for n in ("radius", "centre_y", "shade", "depth"))
        )
    values["mark"] = replace(
        near.mark,
        strength=_lerp(a.mark.strength, b.mark.strength, t),
        y=_lerp(a.mark.y, b.mark.y, t),
        width=_lerp(a.mark.width, b.mark.width, t),
    )
    values["name"] = f"{a.name}~{b.name}@{t:.2f}"
    values["held_out"] = a.held_out or b.held_out
    return Edition(**values)


def draw_edition(rng: np.random.Generator, names: tuple[str, ...], split: str) -> Edition:
    """One edition for a table: a named one of ``names``, or for :data:`MIX` a blend of two of them."""
    name = names[int(rng.integers(len(names)))]
    if name != MIX:
        return EDITIONS[name]
    named = [EDITIONS[n] for n in names if n != MIX and (split != "train" or not EDITIONS[n].held_out)]
    a, b = (named[int(i)] for i in rng.choice(len(named), size=2, replace=len(named) < 2))
    return blend(a, b, float(rng.uniform(0.15, 0.85)))


# ----------------------------------------------------------------------------------------------------------------
# A table's style


def _uniform(rng: np.random.Generator, r: Range) -> float:
    return float(rng.uniform(r[0], r[1])) if r[1] > r[0] else float(r[0])


def _ink(rng: np.random.Generator, colour: str, r: HsvRange, split: str) -> tuple[int, int, int]:
    """A colour of the range; the splits take disjoint hue bands (value bands for black), as the legacy styles."""
    if colour == "black":
        value = faces._band_sample(rng, r.value[0], r.value[1], split, 4)
        return faces._hsv_to_bgr(_uniform(rng, r.hue_deg), _uniform(rng, r.saturation), value)
    hue = faces._band_sample(rng, r.hue_deg[0], r.hue_deg[1], split)
    return faces._hsv_to_bgr(hue, _uniform(rng, r.saturation), _uniform(rng, r.value))


def edition_fonts(edition: Edition, split: str) -> tuple[tuple[str, str], ...]:
    """(key, path) of the edition's installed digit fonts for a split; raises FileNotFoundError naming packages."""
    if split not in fontfiles.SPLITS:
        raise ValueError(f"unknown split {split!r} (expected one of {fontfiles.SPLITS})")
    if split == "train" and edition.held_out:
        raise ValueError(f"edition {edition.name!r} is held out: it is never drawn in the train split")
    keys = edition.train_fonts if split == "train" else edition.heldout_fonts
    allowed = fontfiles.font_keys(split)
    found = tuple(
        (key, path) for key in keys if key in allowed and (path := fontfiles.digit_font_path(key)) is not None
    )
    if not found:
        packages = sorted({fontfiles.digit_font_spec(key).package for key in keys})
        raise FileNotFoundError(
            f"no {split} digit font of edition {edition.name!r} is installed; install one of: {', '.join(packages)}"
        )
    return found


def sample_edition_style(rng: np.random.Generator, edition: Edition, split: str = "train") -> faces.TileStyle:
    """One table's TileStyle drawn inside an edition's ranges; train and heldout never share a font or a hue band."""
    font_key, font_path = (fonts := edition_fonts(edition, split))[int(rng.integers(len(fonts)))]
    marks = fontfiles.available_wordmark_fonts(split)
    mark_key, mark_path = marks[int(rng.integers(len(marks)))]
    b = edition.body
    body = faces._hsv_to_bgr(
        faces._band_sample(rng, b.hue_deg[0], b.hue_deg[1], split), _uniform(rng, b.saturation), _uniform(rng, b.value)
    )
    inks = tuple(_ink(rng, c, edition.inks.of(c), split) for c in faces.COLOUR_NAMES)
    condensed = any(word in font_key for word in CONDENSED_WORDS)
    circle = edition.circle
    digit_centre = _uniform(rng, edition.digit_centre_y)
    colours = list(edition.joker_colours)
    if len(colours) > 1:
        rng.shuffle(colours)
    fields_: dict[str, Any] = {
        "split": split,
        "body_bgr": body,
        "recess_shade": _uniform(rng, circle.shade) if circle else 1.0,
        "recess_radius": _uniform(rng, circle.radius) if circle else 0.4,
        # the digit's anchor: TileStyle places digits at recess_centre_y + digit_centre_y
        "recess_centre_y": _uniform(rng, circle.centre_y) if circle else digit_centre,
        "recess_depth": _uniform(rng, circle.depth) if circle else 0.0,
        "ink_bgr": inks,
        "font_key": font_key,
        "font_path": font_path,
        "digit_weight": _uniform(rng, edition.digit_weight),
        "digit_height": _uniform(rng, edition.digit_height),
        "two_digit_condense": _uniform(rng, edition.two_digit_condense),
        "two_digit_gap": _uniform(rng, edition.two_digit_gap),
        "digit_centre_y": float(rng.uniform(-0.015, 0.015)) if circle else 0.0,
        "wordmark_text": str(edition.mark.texts[int(rng.integers(len(edition.mark.texts)))]),
        "wordmark_font_key": mark_key,
        "wordmark_font_path": mark_path,
        "wordmark_strength": _uniform(rng, edition.mark.strength),
        "wordmark_y": _uniform(rng, edition.mark.y),
        "wordmark_width": _uniform(rng, edition.mark.width),
        "corner_radius": _uniform(rng, edition.corner_radius),
        "bevel_width": _uniform(rng, edition.bevel_width),
        "joker_variant": str(edition.joker_variants[int(rng.integers(len(edition.joker_variants)))]),
        "joker_colour": colours[0],
        "wear": edition.wear[0] + (edition.wear[1] - edition.wear[0]) * float(rng.beta(1.5, 4.0)),
        "gloss": _uniform(rng, edition.gloss),
        "back_variant": str(rng.choice(["plain", "dimple"])),
        "edition": edition.name,
        "face_aspect": _uniform(rng, edition.face_aspect),
        "circle": circle is not None,
        "digit_width": _uniform(rng, edition.digit_width) * (CONDENSED_WIDEN if condensed else 1.0),
        "second_joker_colour": colours[1] if len(colours) > 1 else "",
    }
    if circle is None:  # no circle to size the joker by: its radius is a share of the face width
        fields_["joker_scale"] = _uniform(rng, edition.joker_scale) / fields_["recess_radius"]
    else:
        fields_["joker_scale"] = 0.82
    return faces.TileStyle(name=f"{split}-{edition.name}-{font_key}-{faces.style_digest(fields_)}", **fields_)


def edition_pool(split: str, size: int, names: tuple[str, ...]) -> tuple[faces.TileStyle, ...]:
    """``size`` table styles drawn from the named editions (and blends, for :data:`MIX`) from a seed fixed by the
    split and the names: the same for every dataset of a recipe."""
    problem = check_editions(names, split)
    if problem or not names:
        raise ValueError(problem or "no edition named")
    rng = np.random.default_rng(zlib.crc32(f"tile-styles/{split}/editions/{','.join(names)}".encode()))
    return tuple(sample_edition_style(rng, draw_edition(rng, names, split), split) for _ in range(size))


def contact_sheet(style: faces.TileStyle, *, gap: int = 6) -> np.ndarray:
    """All 53 faces of a style on a grey sheet (BGR uint8): four rows of 1-13 (black, red, blue, orange), then
    the jokers (both colours when the set's two differ). For looking at an edition next to a photo."""
    rng = np.random.default_rng(zlib.crc32(style.name.encode()))
    width, height = faces.face_size(style)
    jokers = [style.joker_colour, style.second_joker_colour or style.joker_colour]
    rows = [[faces.render_face(f"{c}-{n}", style, rng) for n in range(1, 14)] for c in faces.COLOUR_NAMES]
    rows.append([faces.render_face("joker", style, rng, joker_colour=c) for c in jokers])
    sheet = np.full((gap + len(rows) * (height + gap), gap + 13 * (width + gap), 3), 90, np.uint8)
    for r, row in enumerate(rows):
        for c, face in enumerate(row):
            y, x = gap + r * (height + gap), gap + c * (width + gap)
            alpha = face[..., 3:4].astype(np.float32) / 255
            roi = sheet[y : y + height, x : x + width]
            roi[:] = (roi * (1 - alpha) + face[..., :3] * alpha).astype(np.uint8)
    return sheet
