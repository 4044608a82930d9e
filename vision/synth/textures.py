"""Procedural table tops seen straight from above, at a physical scale (px_per_mm), from numpy/OpenCV noise.

Why: real games are played on wood, felt, laminate, cloth and stone; a detector trained on one table learns the
table. Materials are split so that "heldout" tables are kinds never seen in training. Everything is generated
at a reduced working resolution where the pattern allows (low-frequency structure), then upsampled, so a
1600x1200 top takes a few tens of milliseconds.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

TABLE_MATERIALS: dict[str, tuple[str, ...]] = {
    "train": ("oak", "walnut", "green_felt", "red_felt", "grey_laminate", "white_laminate", "black_matte", "linen"),
    "heldout": ("pine", "cherry", "blue_felt", "grey_felt", "marble", "beige_laminate", "dark_slate", "checked_cloth"),
}

# base BGR, grain/vein BGR for each material
_WOODS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "oak": ((95, 150, 195), (55, 100, 150)),
    "walnut": ((45, 70, 100), (25, 40, 62)),
    "pine": ((130, 190, 225), (70, 130, 185)),
    "cherry": ((60, 95, 160), (35, 60, 115)),
}
_FELTS: dict[str, tuple[int, int, int]] = {
    "green_felt": (60, 110, 30),
    "red_felt": (40, 35, 130),
    "blue_felt": (120, 60, 25),
    "grey_felt": (105, 105, 100),
}
_FLATS: dict[str, tuple[int, int, int]] = {
    "grey_laminate": (150, 150, 145),
    "white_laminate": (228, 230, 230),
    "black_matte": (32, 32, 34),
    "beige_laminate": (175, 200, 215),
    "dark_slate": (58, 55, 50),
}


def _noise(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]) -> np.ndarray:
    """Smooth value noise in [-1, 1]-ish: random values on a coarse grid, bicubically upsampled to ``shape``."""
    coarse = rng.standard_normal((max(2, cells[0]), max(2, cells[1]))).astype(np.float32)
    return cv2.resize(coarse, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def _fbm(rng: np.random.Generator, shape: tuple[int, int], base_cells: int, octaves: int = 3) -> np.ndarray:
    """Fractal sum of value noise octaves, normalised to about unit variance."""
    h, w = shape
    total = np.zeros(shape, np.float32)
    amp, norm = 1.0, 0.0
    for o in range(octaves):
        cells = base_cells * 2**o
        total += amp * _noise(rng, shape, (max(2, round(cells * h / max(h, w))), max(2, round(cells * w / max(h, w)))))
        norm += amp * amp
        amp *= 0.5
    return total / math.sqrt(norm)


def _colourise(value: np.ndarray, base: tuple[int, int, int], dark: tuple[int, int, int]) -> np.ndarray:
    """Blend between base colour (value 0) and dark colour (value 1), float32 BGR."""
    v = np.clip(value, 0.0, 1.0)[..., None]
    b = np.array(base, np.float32)
    d = np.array(dark, np.float32)
    return b + (d - b) * v


def _jitter(rng: np.random.Generator, bgr: tuple[int, int, int], amount: float = 0.12) -> tuple[int, int, int]:
    """Per-table variation of a material's colour (brightness and a little tint)."""
    gain = 1.0 + rng.uniform(-amount, amount)
    tint = rng.uniform(-amount / 2, amount / 2, 3)
    return tuple(int(np.clip(c * gain * (1 + t), 0, 255)) for c, t in zip(bgr, tint, strict=True))  # type: ignore[return-value]


def _wood(name: str, work: tuple[int, int], ppm: float, rng: np.random.Generator) -> np.ndarray:
    """Planks with growth rings (sine of a warped coordinate) and fibres (noise stretched along the grain)."""
    h, w = work
    base, dark = _WOODS[name]
    base, dark = _jitter(rng, base), _jitter(rng, dark)
    vertical = rng.random() < 0.5
    gh, gw = (w, h) if vertical else (h, w)  # generate with grain along x, transpose if vertical
    plank_mm = rng.uniform(90, 220)
    plank_px = max(8.0, plank_mm * ppm)
    y = np.arange(gh, dtype=np.float32)[:, None]
    plank_id = np.floor(y / plank_px)
    ring_mm = rng.uniform(2.5, 7.0)
    warp = _fbm(rng, (gh, gw), 6, 3) * (rng.uniform(4, 12) * ppm)
    # each plank gets its own ring offset and tone
    offsets = rng.uniform(0, 1000, int(plank_id.max()) + 2).astype(np.float32)
    tones = rng.uniform(-0.12, 0.12, int(plank_id.max()) + 2).astype(np.float32)
    pid = plank_id.astype(np.int32)[:, 0]
    coord = (y + offsets[pid][:, None] * ppm + warp) / (ring_mm * ppm)
    rings = 0.5 + 0.5 * np.sin(2 * np.pi * coord)
    rings = rings**3  # thin dark latewood bands
    fibres = cv2.resize(
        rng.standard_normal((gh, max(2, gw // 24))).astype(np.float32), (gw, gh), interpolation=cv2.INTER_LINEAR
    )
    value = 0.35 + 0.45 * rings + 0.08 * fibres + tones[pid][:, None] + 0.08 * _fbm(rng, (gh, gw), 4, 2)
    # seams between planks
    seam = np.abs(((y + 0.5) % plank_px) - 0.5) < max(0.6, 0.4 * ppm)
    value = np.where(seam, value + 0.5, value)
    img = _colourise(value, base, dark)
    return np.ascontiguousarray(img.transpose(1, 0, 2)) if vertical else img


def _felt(name: str, work: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    colour = np.array(_jitter(rng, _FELTS[name]), np.float32)
    mottling = 0.06 * _fbm(rng, work, 5, 3)
    fuzz = 0.05 * rng.standard_normal(work, dtype=np.float32)
    return colour * (1.0 + mottling + fuzz)[..., None]


def _flat(name: str, work: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    colour = np.array(_jitter(rng, _FLATS[name], 0.08), np.float32)
    speckle = 0.025 * rng.standard_normal(work, dtype=np.float32)
    cloud = 0.03 * _fbm(rng, work, 3, 2)
    return colour * (1.0 + speckle + cloud)[..., None] + 4.0 * _fbm(rng, work, 2, 1)[..., None]


def _marble(work: tuple[int, int], ppm: float, rng: np.random.Generator) -> np.ndarray:
    """White/grey stone with turbulent dark veins: abs(sin(x + turbulence))."""
    h, w = work
    a = rng.uniform(0, math.pi)
    yy = np.arange(h, dtype=np.float32)[:, None]
    xx = np.arange(w, dtype=np.float32)[None, :]
    u = (xx * math.cos(a) + yy * math.sin(a)) / (rng.uniform(120, 300) * ppm)
    turb = _fbm(rng, work, 4, 4) * rng.uniform(1.5, 3.0)
    veins = 1.0 - np.abs(np.sin(np.pi * (u + turb)))
    veins = veins**8
    base = np.array(_jitter(rng, (222, 224, 226), 0.06), np.float32)
    vein = np.array(_jitter(rng, (120, 122, 128), 0.2), np.float32)
    cloud = 0.04 * _fbm(rng, work, 6, 2)
    img = base * (1.0 + cloud)[..., None]
    return img + (vein - img) * (0.8 * veins)[..., None]


def _cloth(name: str, work: tuple[int, int], ppm: float, rng: np.random.Generator) -> np.ndarray:
    """Woven fabric: thread pattern at a physical pitch (faded out where it would alias), plus folds; a checked
    tablecloth adds coloured stripes both ways."""
    h, w = work
    pitch = rng.uniform(0.6, 1.4) * ppm  # px per thread
    yy = np.arange(h, dtype=np.float32)[:, None]
    xx = np.arange(w, dtype=np.float32)[None, :]
    weave_amp = float(np.clip((pitch - 1.5) / 3.0, 0.0, 1.0)) * 0.08
    weave = weave_amp * np.sin(2 * np.pi * xx / pitch) * np.sin(2 * np.pi * yy / pitch)
    slub = 0.05 * cv2.resize(rng.standard_normal((h, max(2, w // 30))).astype(np.float32), (w, h))
    folds = 0.06 * _fbm(rng, work, 3, 2)
    shade = 1.0 + weave + slub + folds
    if name == "checked_cloth":
        check = rng.uniform(15, 35) * ppm
        a = (np.floor(xx / check) % 2).astype(np.float32)
        b = (np.floor(yy / check) % 2).astype(np.float32)
        white = np.array([235, 238, 240], np.float32)
        blue, green, red = (int(c) for c in rng.choice([(60, 60, 190), (150, 90, 40), (60, 130, 60)]))
        ink = np.array(_jitter(rng, (blue, green, red)))
        mix = ((a + b) / 2.0)[..., None]
        colour = white + (ink.astype(np.float32) - white) * mix
        return colour * shade[..., None]
    colour = np.array(_jitter(rng, (170, 185, 190), 0.15), np.float32)  # natural linen
    return colour * shade[..., None] + 0.0 * xx[..., None]


def table_texture(material: str, size_px: tuple[int, int], px_per_mm: float, rng: np.random.Generator) -> np.ndarray:
    """BGR uint8 (H, W, 3) table top of ``material`` with (W, H) = ``size_px``, seen from above at ``px_per_mm``."""
    width, height = size_px
    if not any(material in kinds for kinds in TABLE_MATERIALS.values()):
        raise ValueError(f"unknown table material {material!r}")
    # low-frequency materials are generated at half resolution; the upsampling also softens pixel noise
    scale = 0.5
    work = (max(2, round(height * scale)), max(2, round(width * scale)))
    ppm = px_per_mm * scale
    if material in _WOODS:
        img = _wood(material, work, ppm, rng)
    elif material in _FELTS:
        img = _felt(material, work, rng)
    elif material in _FLATS:
        img = _flat(material, work, rng)
    elif material == "marble":
        img = _marble(work, ppm, rng)
    else:
        img = _cloth(material, work, ppm, rng)
    # quantise before upsampling: resizing uint8 moves a quarter of the bytes of float32
    np.clip(img, 0, 255, out=img)
    return cv2.resize(img.astype(np.uint8), (width, height), interpolation=cv2.INTER_LINEAR)
