"""Lighting and camera-sensor effects applied to a composed scene, plus the shadow geometry the composer needs.

Why: real overhead photos of a table are lit by lamps and windows (colour cast, brightness gradients, vignetting,
specular glare on glossy tiles) and taken by cheap cameras (defocus, motion blur, noise, JPEG). A model trained on
clean renders fails on those. Everything works on low-resolution gain maps that are upsampled once, and noise
comes from a small random tile that is wrapped over the image, so a full pass stays cheap.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import cv2
import numpy as np


@dataclass(frozen=True, slots=True)
class Lighting:
    """One lighting set-up for a scene (constant across the frames of a video)."""

    colour_temperature_k: float
    direction_deg: float  # azimuth the light comes FROM, image coordinates (0 = from the right, 90 = from the bottom)
    elevation_deg: float  # 90 = straight overhead: short shadows
    ambient: float  # overall brightness gain
    gradient: float  # relative brightness change across the image along the light direction
    vignette: float  # relative darkening in the corners
    glare: tuple[tuple[float, float, float, float], ...]  # (x, y, radius, strength), x/y/radius as image fractions
    shadow: float  # 0..1 opacity of cast shadows
    cast_kept: float = 0.5  # share of the light's colour cast the camera's white balance leaves in (0: none)

    def describe(self) -> dict:
        """A JSON-ready description for the dataset sidecar."""
        out = asdict(self)
        out["glare"] = [list(g) for g in self.glare]
        return out


@dataclass(frozen=True, slots=True)
class Sensor:
    """One camera: optics, motion, noise, compression and tone curve."""

    defocus_px: float  # disk blur radius
    motion_blur_px: float  # length of the motion streak
    motion_angle_deg: float
    noise_sigma: float  # read noise, 8-bit units
    shot_noise: float  # signal-dependent noise scale (sigma = shot_noise * sqrt(value))
    jpeg_quality: int
    gamma: float
    saturation: float  # camera colour processing
    # phone-camera processing ("phone" sensors; 0 = off, the default sensors have none)
    chroma_noise: float = 0.0  # sigma of blotchy low-frequency colour noise, 8-bit units
    sharpen: float = 0.0  # unsharp-mask amount (halos at edges)
    denoise: float = 0.0  # 0..1 strength of the smearing noise reduction before sharpening

    def describe(self) -> dict:
        """A JSON-ready description for the dataset sidecar."""
        return asdict(self)


LIGHTINGS: tuple[str, ...] = ("default", "wide")
SENSORS: tuple[str, ...] = ("default", "phone")


def sample_lighting(rng: np.random.Generator, split: str = "train", kind: str = "default") -> Lighting:
    """Mostly indoor warm-to-neutral light; a few cool (daylight, LED) scenes; glare spots on half of them.

    The held-out split uses a wider temperature range and stronger gradients than train, so it tests
    robustness to lighting beyond what training saw. ``kind="wide"`` (the editions recipes) draws any light
    from 2700 K to 7500 K with a white balance that leaves 20-90 % of the cast, more and stronger glare and
    darker shadows, in both splits.
    """
    if kind not in LIGHTINGS:
        raise ValueError(f"unknown lighting {kind!r} (expected one of {LIGHTINGS})")
    if kind == "wide":
        return _sample_wide_lighting(rng)
    if split == "heldout":
        temp = float(rng.uniform(2500, 8000))
        gradient = float(rng.uniform(0.0, 0.5))
    else:
        temp = float(rng.choice([rng.uniform(2800, 4200), rng.uniform(4200, 6800)], p=[0.55, 0.45]))
        gradient = float(rng.uniform(0.0, 0.35))
    n_glare = int(rng.choice([0, 1, 2, 3], p=[0.5, 0.3, 0.15, 0.05]))
    glare = tuple(
        (
            float(rng.uniform(0.05, 0.95)),
            float(rng.uniform(0.05, 0.95)),
            float(rng.uniform(0.03, 0.15)),
            float(rng.uniform(0.15, 0.9)),
        )
        for _ in range(n_glare)
    )
    return Lighting(
        colour_temperature_k=temp,
        direction_deg=float(rng.uniform(0, 360)),
        elevation_deg=float(rng.uniform(35, 85)),
        ambient=float(rng.uniform(0.75, 1.15)),
        gradient=gradient,
        vignette=float(rng.uniform(0.0, 0.35)),
        glare=glare,
        shadow=float(rng.uniform(0.15, 0.55)),
    )


def _sample_wide_lighting(rng: np.random.Generator) -> Lighting:
    n_glare = int(rng.choice([0, 1, 2, 3], p=[0.35, 0.35, 0.2, 0.1]))
    glare = tuple(
        (
            float(rng.uniform(0.05, 0.95)),
            float(rng.uniform(0.05, 0.95)),
            float(rng.uniform(0.02, 0.18)),
            float(rng.uniform(0.2, 1.2)),
        )
        for _ in range(n_glare)
    )
    return Lighting(
        colour_temperature_k=float(rng.uniform(2700, 7500)),
        direction_deg=float(rng.uniform(0, 360)),
        elevation_deg=float(rng.uniform(25, 85)),
        ambient=float(rng.uniform(0.65, 1.2)),
        gradient=float(rng.uniform(0.0, 0.5)),
        vignette=float(rng.uniform(0.0, 0.45)),
        glare=glare,
        shadow=float(rng.uniform(0.15, 0.75)),
        cast_kept=float(rng.uniform(0.2, 0.9)),
    )


def _temperature_gains(kelvin: float, kept: float = 0.5) -> np.ndarray:
    """BGR multipliers of a light of ``kelvin`` relative to 5500 K, after a partial (imperfect) white balance.

    Uses the usual blackbody-to-RGB fit (Tanner Helland) and keeps ``kept`` of the cast (about half by default:
    cameras correct most of it, but not all).
    """

    def rgb(k: float) -> np.ndarray:
        t = k / 100.0
        r = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
        g = 99.47 * math.log(t) - 161.12 if t <= 66 else 288.12 * (t - 60) ** -0.0755
        b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.52 * math.log(t - 10) - 305.04)
        return np.clip(np.array([b, g, r], np.float64), 1.0, 255.0)

    ratio = rgb(kelvin) / rgb(5500.0)
    gains = 1.0 + kept * (ratio - 1.0)
    return (gains / gains.mean()).astype(np.float32)


def _gain_map(shape: tuple[int, int], lighting: Lighting) -> tuple[np.ndarray, np.ndarray]:
    """Low-resolution multiplicative brightness map and additive glare map, upsampled to ``shape`` (H, W)."""
    h, w = shape
    sh, sw = max(2, h // 16), max(2, w // 16)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u = (xx + 0.5) / sw - 0.5
    v = (yy + 0.5) / sh - 0.5
    a = math.radians(lighting.direction_deg)
    along = u * math.cos(a) + v * math.sin(a)  # +0.5 toward the light
    gain = lighting.ambient * (1.0 + lighting.gradient * along)
    r2 = (u * u + v * v) / 0.5
    gain = gain * (1.0 - lighting.vignette * r2**1.5)
    glare: np.ndarray = np.zeros((sh, sw), np.float32)
    aspect = w / h
    for gx, gy, gr, gs in lighting.glare:
        d2 = ((u + 0.5 - gx) * aspect) ** 2 + (v + 0.5 - gy) ** 2
        glare += gs * np.exp(-d2 / (2 * gr * gr))
    gain = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    glare = cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR)
    return gain, glare


def apply_lighting(image: np.ndarray, lighting: Lighting) -> np.ndarray:
    """Colour cast, low-frequency gradient along the light direction, vignetting and saturating glare (uint8 BGR)."""
    h, w = image.shape[:2]
    gain, glare = _gain_map((h, w), lighting)
    cast = _temperature_gains(lighting.colour_temperature_k, lighting.cast_kept)
    out = image.astype(np.float32)
    # per-channel gain maps built with cv2.merge avoid numpy broadcasting temporaries (this runs on every frame)
    out *= cv2.merge([gain * float(c) for c in cast])
    if lighting.glare:
        # specular glare: adds light and washes colour out toward the (slightly cast) light colour
        glare *= 255.0
        out += cv2.merge([glare * float(c) for c in cast])
    np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8)


def sample_sensor(rng: np.random.Generator, image_size: tuple[int, int], kind: str = "default") -> Sensor:
    """Mostly mild camera degradations, sometimes strong; blur lengths scale with the image width.

    ``kind="phone"`` adds a phone camera's processing: blotchy chroma noise, noise reduction that smears fine
    texture, sharpening halos and harder JPEG.
    """
    if kind not in SENSORS:
        raise ValueError(f"unknown sensor {kind!r} (expected one of {SENSORS})")
    width = image_size[0]
    k = width / 1280.0
    strong = rng.random() < 0.15
    defocus = rng.uniform(0.0, 1.2) if not strong else rng.uniform(1.2, 3.5)
    motion = 0.0 if rng.random() < 0.7 else (rng.uniform(1.0, 3.0) if not strong else rng.uniform(3.0, 8.0))
    sensor = Sensor(
        defocus_px=float(defocus * k),
        motion_blur_px=float(motion * k),
        motion_angle_deg=float(rng.uniform(0, 180)),
        noise_sigma=float(rng.uniform(0.5, 3.0) if not strong else rng.uniform(3.0, 8.0)),
        shot_noise=float(rng.uniform(0.0, 0.35)),
        jpeg_quality=int(rng.integers(70, 96) if not strong else rng.integers(35, 70)),
        gamma=float(rng.uniform(0.85, 1.15)),
        saturation=float(rng.uniform(0.85, 1.2)),
    )
    if kind == "phone":
        sensor = replace(
            sensor,
            chroma_noise=float(rng.uniform(1.0, 6.0)),
            sharpen=float(rng.uniform(0.2, 1.2)),
            denoise=float(rng.uniform(0.0, 1.0)),
            jpeg_quality=int(rng.integers(45, 90)),
        )
    return sensor


def _disk_kernel(radius: float) -> np.ndarray:
    r = max(radius, 0.5)
    size = 2 * math.ceil(r) + 1
    yy, xx = np.mgrid[:size, :size].astype(np.float32) - size // 2
    k = np.clip(r + 0.5 - np.sqrt(xx * xx + yy * yy), 0.0, 1.0)
    return k / k.sum()


def _motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    size = 2 * math.ceil(length / 2) + 1
    k = np.zeros((size, size), np.float32)
    c = size // 2
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length / 2, math.sin(a) * length / 2
    cv2.line(k, (round(c * 16 - dx * 16), round(c * 16 - dy * 16)), (round(c * 16 + dx * 16), round(c * 16 + dy * 16)),
             1.0, 1, cv2.LINE_AA, shift=4)  # fmt: skip
    return k / max(k.sum(), 1e-6)


def _noise_tile(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Unit Gaussian noise of ``shape`` (H, W, 3), wrapped from a 256x256 random tile at a random offset (fast)."""
    h, w = shape
    tile = rng.standard_normal((256, 256, 3), dtype=np.float32)
    oy, ox = (int(v) for v in rng.integers(0, 256, 2))
    tile = np.roll(tile, (oy, ox), axis=(0, 1))
    reps = (math.ceil(h / 256), math.ceil(w / 256), 1)
    return np.tile(tile, reps)[:h, :w]


def apply_sensor(image: np.ndarray, sensor: Sensor, rng: np.random.Generator) -> np.ndarray:
    """Defocus (disk), motion blur, saturation, Gaussian + shot noise, gamma and a JPEG round trip (uint8 BGR)."""
    out = image
    if sensor.defocus_px >= 0.6:
        out = cv2.filter2D(out, -1, _disk_kernel(sensor.defocus_px), borderType=cv2.BORDER_REFLECT)
    if sensor.motion_blur_px >= 1.0:
        out = cv2.filter2D(out, -1, _motion_kernel(sensor.motion_blur_px, sensor.motion_angle_deg))
    if abs(sensor.saturation - 1.0) > 0.02:
        grey = cv2.cvtColor(cv2.cvtColor(out, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
        out = cv2.addWeighted(out, sensor.saturation, grey, 1.0 - sensor.saturation, 0.0)
    # noise sigma per pixel via a lookup table (read noise + shot noise ~ sqrt(signal)), all in place
    sigma_lut = (sensor.noise_sigma + sensor.shot_noise * np.sqrt(np.arange(256, dtype=np.float32))).astype(np.float32)
    noise = _noise_tile(rng, out.shape[:2])
    noise *= cv2.LUT(out, sigma_lut)
    noise += out
    if sensor.chroma_noise > 0:  # blotchy colour noise: low-resolution, chroma only
        noise += _chroma_noise(rng, out.shape[:2], sensor.chroma_noise)
    np.clip(noise, 0, 255, out=noise)
    if sensor.denoise > 0 or sensor.sharpen > 0:
        noise = _phone_pipeline(noise, sensor)
    lut = np.clip(255.0 * (np.arange(256) / 255.0) ** sensor.gamma, 0, 255).astype(np.uint8)
    out = cv2.LUT(noise.astype(np.uint8), lut)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(sensor.jpeg_quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if decoded is None:  # never seen: the buffer was just encoded
        raise RuntimeError("JPEG decoding failed")
    return decoded


def _chroma_noise(rng: np.random.Generator, shape: tuple[int, int], sigma: float) -> np.ndarray:
    """Low-frequency colour noise with (about) zero luminance: what a phone's demosaicing leaves in shadows."""
    h, w = shape
    small = rng.standard_normal((max(2, h // 6), max(2, w // 6), 3)).astype(np.float32) * sigma
    small -= small.mean(axis=2, keepdims=True)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _phone_pipeline(image: np.ndarray, sensor: Sensor) -> np.ndarray:
    """Noise reduction (a bilateral filter, blended in by ``denoise``) then an unsharp mask (``sharpen``)."""
    out = image
    if sensor.denoise > 0:
        smooth = cv2.bilateralFilter(out, 5, 12.0 + 20.0 * sensor.denoise, 3.0)
        out = cv2.addWeighted(out, 1.0 - sensor.denoise, smooth, sensor.denoise, 0.0)
    if sensor.sharpen > 0:
        blur = cv2.GaussianBlur(out, (0, 0), 1.2)
        out = cv2.addWeighted(out, 1.0 + sensor.sharpen, blur, -sensor.sharpen, 0.0)
    np.clip(out, 0, 255, out=out)
    return out


def shadow_strength(lighting: Lighting) -> float:
    """Opacity (0..1) of shadows cast on the table: weaker under diffuse (bright ambient) light."""
    return float(np.clip(lighting.shadow * (1.2 - 0.3 * lighting.ambient), 0.0, 0.8))


def shadow_offset_mm(lighting: Lighting, height_mm: float) -> tuple[float, float]:
    """Where the shadow of a point ``height_mm`` above the table falls relative to its foot, in mm.

    x points right, y points away from the camera's bottom edge (up the image). The shadow falls away from the
    light: length = height / tan(elevation).
    """
    length = height_mm / math.tan(math.radians(max(5.0, lighting.elevation_deg)))
    a = math.radians(lighting.direction_deg)
    # the light comes from direction a (image coordinates, y down); the shadow goes the opposite way
    dx_img, dy_img = -math.cos(a) * length, -math.sin(a) * length
    return float(dx_img), float(-dy_img)
