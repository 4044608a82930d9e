"""The font registry of the synthetic tile faces: which font files each split may use, and where they are found.

The "train" and "heldout" splits use DISJOINT font families (:func:`font_keys`), so a held-out test set measures
how tiles are read in fonts never trained on. :func:`available_fonts` and :func:`available_wordmark_fonts` give the
installed ones to :func:`vision.synth.faces.sample_style`; :func:`digit_font_spec` and :func:`digit_font_path` serve
the named editions (``vision.synth.editions``), whose extra fonts are in no font set.

Fonts (files are looked up at run time, never committed):

=========  ===============================  ==========================================================
split      role / font files                provided by
=========  ===============================  ==========================================================
train      digits: DejaVuSans-Bold,         Debian ``fonts-dejavu-core``
           DejaVuSansCondensed-Bold
train      digits: LiberationSans-Bold,     Debian ``fonts-liberation``
           LiberationSansNarrow-Bold
train      digits: Roboto-Bold, -Black      PyPI ``font-roboto``
train      digits: Lato-Bold, -Black        PyPI ``font-lato``
train      wordmark: DejaVuSerif-BoldItalic Debian ``fonts-dejavu-core``
           LiberationSerif-BoldItalic       Debian ``fonts-liberation``
train      digits (recipes with ``fonts: wide``, in addition to the above):
           OpenSans-Bold, -ExtraBold,       Debian ``fonts-open-sans``
           -CondBold
           Cantarell-Bold, -ExtraBold       Debian ``fonts-cantarell``
           LeagueSpartan-Bold, -Black       Debian ``fonts-league-spartan``
           B612-Bold                        Debian ``fonts-b612``
           Comfortaa-Bold                   Debian ``fonts-comfortaa``
           Inter-Bold, -Black               Debian ``fonts-inter``
           texgyreadventor-bold             Debian ``fonts-texgyre``
heldout    digits: FreeSansBold             Debian ``fonts-freefont-ttf``
heldout    digits: SourceSansPro-Bold,      PyPI ``font-source-sans-pro``
           -Black
heldout    digits: FjallaOne-Regular        PyPI ``font-fjallaone``
heldout    wordmark: FreeSerifBoldItalic    Debian ``fonts-freefont-ttf``
           SourceSansPro-BoldIt             PyPI ``font-source-sans-pro``
train      digits, named editions only      Debian ``fonts-roboto-unhinted`` (Apache-2.0)
           (``vision.synth.editions``):
           RobotoCondensed-Bold
train      digits, the ``rounded``          Debian ``fonts-mplus``, ``fonts-manrope``,
           edition only: Mplus1-Black,      ``fonts-quicksand``, ``fonts-comic-neue``, ``fonts-oxygen``
           Mplus2-Black, Manrope-ExtraBold, (all SIL OFL 1.1; Oxygen also GPL-3+ with the font
           Quicksand-Bold, ComicNeue-Bold,  exception)
           Oxygen-Sans-Bold
heldout    digits, named editions only:     Debian ``fonts-paratype`` (ParaType Free Font License:
           PTN77F (PT Sans Narrow Bold)     free use, modification and redistribution)
heldout    digits, named editions only:     Debian ``fonts-dosis`` (SIL OFL 1.1)
           Dosis-Bold, -ExtraBold
=========  ===============================  ==========================================================

Every font above is under a licence that allows use and redistribution (SIL OFL 1.1, Apache-2.0, the Bitstream
Vera / DejaVu licence, GPL with the font exception for FreeFont, the ParaType Free Font License).

CI installs them with::

    apt-get install -y fonts-dejavu-core fonts-liberation fonts-freefont-ttf
    apt-get install -y fonts-open-sans fonts-cantarell fonts-league-spartan fonts-b612 fonts-comfortaa \
        fonts-inter fonts-texgyre   # the "wide" font set
    apt-get install -y fonts-roboto-unhinted fonts-paratype fonts-dosis   # the named editions' extra fonts
    apt-get install -y fonts-mplus fonts-manrope fonts-quicksand fonts-comic-neue fonts-oxygen   # the rounded edition
    pip install font-roboto font-lato font-source-sans-pro font-fjallaone

The "wide" set leaves out every Helvetica, Arial and Lato clone (Nimbus Sans, TeX Gyre Heros, Arimo, Carlito):
FreeSans, held out, is a Nimbus Sans derivative, and the others duplicate Liberation Sans and Lato. The base
set is what the first datasets and the bench games were drawn from; its style pool stays as it was.

Missing fonts of a split are skipped; :func:`available_fonts` raises when a split has none at all.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

SPLITS: tuple[str, ...] = ("train", "heldout")
_DEBIAN_FONT_DIRS = (
    Path("/usr/share/fonts/truetype"),
    Path("/usr/share/fonts/opentype"),
    Path("/usr/share/fonts"),
    Path("/usr/share/texmf/fonts/opentype"),  # fonts-texgyre
)


@dataclass(frozen=True, slots=True)
class FontSpec:
    """One font file a split may use: where it comes from, so a missing one names its package."""

    key: str
    file: str
    source: str  # "debian" or "pypi"
    package: str
    module: str = ""  # importable module of a PyPI font package, whose files/ folder holds the font


_DIGIT_FONTS: dict[str, tuple[FontSpec, ...]] = {
    "train": (
        FontSpec("dejavu-sans-bold", "DejaVuSans-Bold.ttf", "debian", "fonts-dejavu-core"),
        FontSpec("dejavu-sans-condensed-bold", "DejaVuSansCondensed-Bold.ttf", "debian", "fonts-dejavu-core"),
        FontSpec("liberation-sans-bold", "LiberationSans-Bold.ttf", "debian", "fonts-liberation"),
        FontSpec("liberation-sans-narrow-bold", "LiberationSansNarrow-Bold.ttf", "debian", "fonts-liberation"),
        FontSpec("roboto-bold", "Roboto-Bold.ttf", "pypi", "font-roboto", "font_roboto"),
        FontSpec("roboto-black", "Roboto-Black.ttf", "pypi", "font-roboto", "font_roboto"),
        FontSpec("lato-bold", "Lato-Bold.ttf", "pypi", "font-lato", "font_lato"),
        FontSpec("lato-black", "Lato-Black.ttf", "pypi", "font-lato", "font_lato"),
    ),
    "heldout": (
        FontSpec("freesans-bold", "FreeSansBold.ttf", "debian", "fonts-freefont-ttf"),
        FontSpec(
            "source-sans-pro-bold", "SourceSansPro-Bold.ttf", "pypi", "font-source-sans-pro", "font_source_sans_pro"
        ),
        FontSpec(
            "source-sans-pro-black", "SourceSansPro-Black.ttf", "pypi", "font-source-sans-pro", "font_source_sans_pro"
        ),
        FontSpec("fjalla-one", "FjallaOne-Regular.ttf", "pypi", "font-fjallaone", "font_fjallaone"),
    ),
}
_WIDE_DIGIT_FONTS: dict[str, tuple[FontSpec, ...]] = {
    "train": (
        FontSpec("open-sans-bold", "OpenSans-Bold.ttf", "debian", "fonts-open-sans"),
        FontSpec("open-sans-extrabold", "OpenSans-ExtraBold.ttf", "debian", "fonts-open-sans"),
        FontSpec("open-sans-condensed-bold", "OpenSans-CondBold.ttf", "debian", "fonts-open-sans"),
        FontSpec("cantarell-bold", "Cantarell-Bold.otf", "debian", "fonts-cantarell"),
        FontSpec("cantarell-extrabold", "Cantarell-ExtraBold.otf", "debian", "fonts-cantarell"),
        FontSpec("league-spartan-bold", "LeagueSpartan-Bold.otf", "debian", "fonts-league-spartan"),
        FontSpec("league-spartan-black", "LeagueSpartan-Black.otf", "debian", "fonts-league-spartan"),
        FontSpec("b612-bold", "B612-Bold.otf", "debian", "fonts-b612"),
        FontSpec("comfortaa-bold", "Comfortaa-Bold.ttf", "debian", "fonts-comfortaa"),
        FontSpec("inter-bold", "Inter-Bold.otf", "debian", "fonts-inter"),
        FontSpec("inter-black", "Inter-Black.otf", "debian", "fonts-inter"),
        FontSpec("tex-gyre-adventor-bold", "texgyreadventor-bold.otf", "debian", "fonts-texgyre"),
    ),
    "heldout": (),
}
"""Extra digit fonts of the "wide" font set (``SceneParams.fonts``): more editions for the classifier to learn."""
FONT_SETS: tuple[str, ...] = ("base", "wide")
_EDITION_DIGIT_FONTS: dict[str, tuple[FontSpec, ...]] = {
    "train": (
        FontSpec("roboto-condensed-bold", "RobotoCondensed-Bold.ttf", "debian", "fonts-roboto-unhinted"),
        FontSpec("mplus1-black", "Mplus1-Black.otf", "debian", "fonts-mplus"),
        FontSpec("mplus2-black", "Mplus2-Black.otf", "debian", "fonts-mplus"),
        FontSpec("manrope-extrabold", "Manrope-ExtraBold.ttf", "debian", "fonts-manrope"),
        FontSpec("quicksand-bold", "Quicksand-Bold.ttf", "debian", "fonts-quicksand"),
        FontSpec("comic-neue-bold", "ComicNeue-Bold.otf", "debian", "fonts-comic-neue"),
        FontSpec("oxygen-sans-bold", "Oxygen-Sans-Bold.ttf", "debian", "fonts-oxygen"),
    ),
    "heldout": (
        FontSpec("pt-sans-narrow-bold", "PTN77F.ttf", "debian", "fonts-paratype"),
        FontSpec("dosis-bold", "Dosis-Bold.otf", "debian", "fonts-dosis"),
        FontSpec("dosis-extrabold", "Dosis-ExtraBold.otf", "debian", "fonts-dosis"),
    ),
}
"""Digit fonts only the named editions (``vision.synth.editions``) use, by key; not in the base or wide sets."""
_WORDMARK_FONTS: dict[str, tuple[FontSpec, ...]] = {
    "train": (
        FontSpec("dejavu-serif-bold-italic", "DejaVuSerif-BoldItalic.ttf", "debian", "fonts-dejavu-core"),
        FontSpec("liberation-serif-bold-italic", "LiberationSerif-BoldItalic.ttf", "debian", "fonts-liberation"),
    ),
    "heldout": (
        FontSpec("freeserif-bold-italic", "FreeSerifBoldItalic.ttf", "debian", "fonts-freefont-ttf"),
        FontSpec(
            "source-sans-pro-bold-italic",
            "SourceSansPro-BoldIt.ttf",
            "pypi",
            "font-source-sans-pro",
            "font_source_sans_pro",
        ),
    ),
}


def _locate(spec: FontSpec) -> Path | None:
    """The font file of a spec if its package is installed, else None."""
    if spec.source == "pypi":
        found = importlib.util.find_spec(spec.module)
        if found is None or not found.submodule_search_locations:
            return None
        for root in found.submodule_search_locations:
            path = Path(root) / "files" / spec.file
            if path.is_file():
                return path
        return None
    for base in _DEBIAN_FONT_DIRS:
        if base.is_dir():
            hits = sorted(base.rglob(spec.file))
            if hits:
                return hits[0]
    return None


def _specs(table_name: str, split: str, fonts: str = "base") -> tuple[FontSpec, ...]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (expected one of {SPLITS})")
    if fonts not in FONT_SETS:
        raise ValueError(f"unknown font set {fonts!r} (expected one of {FONT_SETS})")
    if table_name == "wordmark":
        return _WORDMARK_FONTS[split]
    return _DIGIT_FONTS[split] + (_WIDE_DIGIT_FONTS[split] if fonts == "wide" else ())


@functools.cache
def _available(table_name: str, split: str, fonts: str = "base") -> tuple[tuple[str, str], ...]:
    specs = _specs(table_name, split, fonts)
    found = tuple((spec.key, str(path)) for spec in specs if (path := _locate(spec)) is not None)
    if not found:
        packages = sorted({f"{s.package} ({s.source})" for s in specs})
        raise FileNotFoundError(
            f"no {table_name} font for split {split!r} is installed; install one of: {', '.join(packages)} "
            "(apt-get install -y fonts-dejavu-core fonts-liberation fonts-freefont-ttf; "
            "pip install font-roboto font-lato font-source-sans-pro font-fjallaone)"
        )
    return found


def available_fonts(split: str, fonts: str = "base") -> tuple[tuple[str, str], ...]:
    """(key, file path) of the digit fonts installed for a split and font set; raises FileNotFoundError naming
    packages if none."""
    return _available("digits", split, fonts)


def available_wordmark_fonts(split: str) -> tuple[tuple[str, str], ...]:
    """(key, file path) of the wordmark fonts installed for a split; raises like :func:`available_fonts`."""
    return _available("wordmark", split)


def font_specs(split: str) -> tuple[FontSpec, ...]:
    """Every font (digits of both font sets and the named editions, wordmark) a split may ever use, installed or not."""
    return (*_specs("digits", split, "wide"), *_EDITION_DIGIT_FONTS[split], *_WORDMARK_FONTS[split])


def font_keys(split: str) -> frozenset[str]:
    """All font keys (digits and wordmark) a split may ever use, installed or not: the splits are disjoint."""
    return frozenset(s.key for s in font_specs(split))


def installed_font_files() -> list[tuple[FontSpec, Path]]:
    """Every font of every split that is installed here, with its file (what a renderer elsewhere would need)."""
    specs = sorted({spec for split in SPLITS for spec in font_specs(split)}, key=lambda spec: spec.key)
    return [(spec, path) for spec in specs if (path := _locate(spec)) is not None]


def digit_font_spec(key: str) -> FontSpec:
    """The digit font of a key, from any split or font set; KeyError for an unknown key."""
    for table in (_DIGIT_FONTS, _WIDE_DIGIT_FONTS, _EDITION_DIGIT_FONTS):
        for specs in table.values():
            for spec in specs:
                if spec.key == key:
                    return spec
    raise KeyError(key)


@functools.cache
def digit_font_path(key: str) -> str | None:
    """The installed file of a digit font key, or None when its package is missing."""
    path = _locate(digit_font_spec(key))
    return None if path is None else str(path)
