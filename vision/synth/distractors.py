"""Things that lie on or reach over a Rummikub table, drawn in image space: hands, phones, cups, score sheets, pens.

Why: in tournament footage a hand is over the table in many frames, a phone runs the move timer, and score sheets
carry handwritten numbers; the detector must neither read those as tiles nor miss tiles they half hide. Each
function draws into ``image`` (uint8 BGR, in place) and sets the pixels it covers to 255 in ``mask`` (uint8 HxW),
so the composer knows which tiles are occluded. Shadows are drawn into the image only, never into the mask.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

_SKIN_TONES: tuple[tuple[int, int, int], ...] = (
    (180, 205, 240),  # very light
    (150, 180, 225),
    (120, 160, 210),
    (95, 130, 185),
    (70, 100, 150),
    (50, 70, 110),
    (35, 50, 80),  # very dark
)


def sample_skin(rng: np.random.Generator) -> tuple[int, int, int]:
    """A BGR skin tone, interpolated between reference tones from very light to very dark."""
    t = rng.uniform(0, len(_SKIN_TONES) - 1)
    i = min(int(t), len(_SKIN_TONES) - 2)
    f = t - i
    a, b = np.array(_SKIN_TONES[i], float), np.array(_SKIN_TONES[i + 1], float)
    c = (a + (b - a) * f) * rng.uniform(0.92, 1.06)
    return tuple(int(v) for v in np.clip(c, 0, 255))  # type: ignore[return-value]


def _rotated_rect(centre: tuple[float, float], size: tuple[float, float], angle_deg: float) -> np.ndarray:
    return cv2.boxPoints((centre, size, angle_deg)).astype(np.float32)


def _fill(image: np.ndarray, mask: np.ndarray, pts: np.ndarray, colour: tuple[float, ...]) -> None:
    p = np.round(pts * 16).astype(np.int32)
    cv2.fillPoly(image, [p], colour, cv2.LINE_AA, shift=4)
    cv2.fillPoly(mask, [p], 255, cv2.LINE_8, shift=4)


def _soft_shadow(
    image: np.ndarray, draw: np.ndarray, offset: tuple[float, float], blur: float, strength: float
) -> None:
    """Darken ``image`` under a blurred, offset copy of a float coverage map ``draw`` (same size as the image)."""
    m = np.array([[1, 0, offset[0]], [0, 1, offset[1]]], np.float32)
    sh = cv2.warpAffine(draw, m, (draw.shape[1], draw.shape[0]))
    sh = cv2.GaussianBlur(sh, (0, 0), max(0.5, blur))
    shade = 1.0 - strength * sh
    image[:] = np.clip(image.astype(np.float32) * shade[..., None], 0, 255).astype(np.uint8)


def _cover(shape: tuple[int, int], polys: list[np.ndarray]) -> np.ndarray:
    cov = np.zeros(shape, np.float32)
    for p in polys:
        cv2.fillPoly(cov, [np.round(p * 16).astype(np.int32)], 1.0, cv2.LINE_AA, shift=4)
    return cov


def _shade_blob(image: np.ndarray, region: np.ndarray, centre: tuple[float, float], axis: tuple[float, float],
                width_px: float, amount: float) -> None:  # fmt: skip
    """Cylindrical shading: brighter along the centre line, darker at the silhouette (limbs, cups)."""
    ys, xs = np.nonzero(region)
    if len(xs) == 0:
        return
    nx, ny = -axis[1], axis[0]
    d = ((xs - centre[0]) * nx + (ys - centre[1]) * ny) / max(width_px / 2, 1.0)
    gain = 1.0 + amount * (0.35 - np.clip(d * d, 0, 1.5)) - 0.1 * amount * d
    vals = image[ys, xs].astype(np.float32) * gain[:, None]
    image[ys, xs] = np.clip(vals, 0, 255).astype(np.uint8)


def draw_hand(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, entry: tuple[float, float],
              tip: tuple[float, float], px_per_mm: float, skin_bgr: tuple[int, int, int] | None = None,
              sleeve_bgr: tuple[int, int, int] | None = None) -> None:  # fmt: skip
    """An arm entering at ``entry`` (an image-edge point) whose fingertips reach ``tip``: sleeve, forearm, hand."""
    skin = skin_bgr or sample_skin(rng)
    sleeve = sleeve_bgr or tuple(int(v) for v in rng.integers(20, 230, 3))
    e, t = np.array(entry, np.float32), np.array(tip, np.float32)
    axis = t - e
    length = float(np.linalg.norm(axis))
    if length < 1:
        return
    u = axis / length
    n = np.array([-u[1], u[0]], np.float32)
    s = px_per_mm
    forearm_w = rng.uniform(60, 80) * s
    hand_w = rng.uniform(80, 95) * s
    hand_len = rng.uniform(150, 185) * s
    # extend the arm beyond the image edge so it never ends visibly
    start = e - u * 200 * s
    wrist = t - u * hand_len
    palm_end = t - u * hand_len * 0.45
    arm = np.array([start + n * forearm_w / 2, wrist + n * forearm_w * 0.42, wrist - n * forearm_w * 0.42,
                    start - n * forearm_w / 2], np.float32)  # fmt: skip
    palm = np.array([wrist + n * forearm_w * 0.45, palm_end + n * hand_w / 2, palm_end - n * hand_w / 2,
                     wrist - n * forearm_w * 0.45], np.float32)  # fmt: skip
    fingers = []
    spread = rng.uniform(-0.1, 0.25)
    for k in range(4):
        off = (k - 1.5) / 1.5 * hand_w * 0.36
        flen = hand_len * 0.45 * (0.8 + 0.2 * (1 - abs(k - 1.3) / 2))
        fdir = u + n * (k - 1.5) * spread * 0.3
        fdir = fdir / np.linalg.norm(fdir)
        base = palm_end + n * off
        fn = np.array([-fdir[1], fdir[0]], np.float32)
        fw = hand_w * 0.11
        fingers.append(np.array([base + fn * fw, base + fdir * flen + fn * fw * 0.85, base + fdir * flen * 1.04,
                                 base + fdir * flen - fn * fw * 0.85, base - fn * fw], np.float32))  # fmt: skip
    side = 1.0 if rng.random() < 0.5 else -1.0
    tb = wrist + u * hand_len * 0.15 + n * side * hand_w * 0.3  # base inside the palm so the thumb stays attached
    tdir = u * 0.85 + n * side * 0.5
    tdir = tdir / np.linalg.norm(tdir)
    tn = np.array([-tdir[1], tdir[0]], np.float32)
    thumb_tip = tb + tdir * hand_len * 0.45
    thumb = np.array([tb + tn * hand_w * 0.12, thumb_tip + tn * hand_w * 0.09, thumb_tip - tn * hand_w * 0.09,
                      tb - tn * hand_w * 0.12], np.float32)  # fmt: skip
    sleeve_len = rng.uniform(0.3, 0.8) * float(np.linalg.norm(wrist - start))
    sleeve_end = start + u * sleeve_len
    sleeve_poly = np.array([start + n * forearm_w * 0.62, sleeve_end + n * forearm_w * 0.6,
                            sleeve_end - n * forearm_w * 0.6, start - n * forearm_w * 0.62], np.float32)  # fmt: skip
    shape = mask.shape
    limbs = [arm, palm, thumb, *fingers, sleeve_poly]
    # cast shadow: the arm hovers above the table, so its shadow is offset and soft
    cov = _cover(shape, limbs)
    off = rng.uniform(10, 40) * s
    ang = rng.uniform(0, 2 * math.pi)
    _soft_shadow(image, cov, (off * math.cos(ang), off * math.sin(ang)), 12 * s, rng.uniform(0.25, 0.5))
    region = np.zeros(shape, np.uint8)
    for poly in [arm, palm, thumb, *fingers]:
        _fill(image, region, poly, skin)
    _shade_blob(image, region, tuple(e), tuple(u), hand_w, 0.35)
    for f in fingers:  # knuckle creases / finger gaps
        cv2.polylines(image, [np.round(f * 16).astype(np.int32)], True, tuple(int(c * 0.8) for c in skin), 1,
                      cv2.LINE_AA, shift=4)  # fmt: skip
    sreg = np.zeros(shape, np.uint8)
    _fill(image, sreg, sleeve_poly, sleeve)
    _shade_blob(image, sreg, tuple(e), tuple(u), forearm_w * 1.2, 0.45)
    mask |= region | sreg


def _seven_segment(img: np.ndarray, text: str, origin: tuple[int, int], h: int, colour: tuple[int, int, int]) -> None:
    """Big timer digits as a phone shows them (thin sans digits drawn with cv2's Hershey font)."""
    scale = h / 22.0
    cv2.putText(img, text, origin, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, max(1, round(scale * 1.6)), cv2.LINE_AA)


def draw_phone(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, centre: tuple[float, float],
               angle_deg: float, px_per_mm: float) -> None:  # fmt: skip
    """A phone (~70x145 mm) lying flat, showing a move timer like "0:37"."""
    s = px_per_mm
    w_mm, h_mm = rng.uniform(66, 78), rng.uniform(140, 160)
    W, H = round(w_mm * s * 2), round(h_mm * s * 2)  # draw upright at 2x, then rotate into place
    W, H = max(W, 8), max(H, 16)
    canvas = np.zeros((H, W, 3), np.uint8)
    body = tuple(int(v) for v in rng.choice([(20, 20, 20), (60, 60, 62), (200, 200, 205), (90, 60, 40)]))
    cv2.rectangle(canvas, (0, 0), (W - 1, H - 1), body, -1)
    bez = max(2, round(3 * s * 2))
    dark = rng.random() < 0.6
    screen = (25, 25, 25) if dark else (235, 235, 235)
    cv2.rectangle(canvas, (bez, bez * 2), (W - bez, H - bez * 2), screen, -1)
    secs = int(rng.integers(0, 120))
    text = f"{secs // 60}:{secs % 60:02d}"
    red, green, blue = (int(v) for v in rng.choice([(240, 240, 240), (80, 220, 80), (60, 60, 230), (30, 30, 30)]))
    fg = (red, green, blue)
    if not dark and sum(fg) > 600:
        fg = (30, 30, 30)
    th = round(H * 0.12)
    tw = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, th / 22.0, 1)[0][0]
    _seven_segment(canvas, text, (max(bez, (W - tw) // 2), round(H * 0.45)), th, fg)
    cv2.circle(canvas, (W // 2, round(H * 0.72)), round(W * 0.2), tuple(int(c * 0.7) for c in fg), max(1, bez // 2),
               cv2.LINE_AA)  # fmt: skip
    # a soft screen reflection
    refl = np.zeros((H, W), np.float32)
    cv2.fillPoly(refl, [np.array([[0, 0], [W * 0.6, 0], [0, H * 0.5]], np.int32)], 1.0)
    canvas = np.clip(canvas + 35 * rng.uniform(0, 1) * cv2.GaussianBlur(refl, (0, 0), W * 0.1)[..., None], 0, 255)
    _paste_rotated(image, mask, canvas.astype(np.uint8), centre, angle_deg, 0.5, radius_px=6 * s * 2, rng=rng, s=s)


def _paste_rotated(image: np.ndarray, mask: np.ndarray, sprite: np.ndarray, centre: tuple[float, float],
                   angle_deg: float, scale: float, *, radius_px: float, rng: np.random.Generator, s: float,
                   shadow: bool = True) -> None:  # fmt: skip
    """Warp an upright sprite (rounded corners) into the image at centre/angle/scale with a contact shadow."""
    h, w = sprite.shape[:2]
    alpha = np.zeros((h, w), np.uint8)
    r = round(min(radius_px, w / 2 - 1, h / 2 - 1))
    cv2.rectangle(alpha, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(alpha, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(alpha, (cx, cy), r, 255, -1, cv2.LINE_AA)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -angle_deg, scale)
    m[:, 2] += np.array(centre) - np.array([w / 2, h / 2])
    H, W = mask.shape
    warped = cv2.warpAffine(sprite, m, (W, H), flags=cv2.INTER_AREA)
    a = cv2.warpAffine(alpha, m, (W, H), flags=cv2.INTER_LINEAR).astype(np.float32) / 255.0
    if shadow:
        _soft_shadow(image, a, (rng.uniform(-3, 3) * s, rng.uniform(1, 4) * s), 3 * s, 0.35)
    af = a[..., None]
    image[:] = np.clip(image * (1 - af) + warped * af, 0, 255).astype(np.uint8)
    mask[a > 0.5] = 255


def draw_cup(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, centre: tuple[float, float],
             px_per_mm: float) -> None:  # fmt: skip
    """A mug seen from above (slightly oblique): outer rim ellipse, wall, coffee/tea/water surface, a handle."""
    s = px_per_mm
    r = rng.uniform(38, 48) * s
    squash = rng.uniform(0.85, 1.0)
    wall = rng.uniform(3, 6) * s
    cx, cy = centre
    cup = tuple(
        int(v) for v in rng.choice([(240, 240, 240), (40, 40, 160), (150, 90, 30), (60, 60, 60), (90, 180, 220)])
    )
    liquid = tuple(int(v) for v in rng.choice([(20, 40, 70), (40, 90, 150), (200, 205, 200), (60, 120, 180)]))
    H, W = mask.shape
    cov = np.zeros((H, W), np.float32)
    cv2.ellipse(cov, (round(cx), round(cy)), (round(r), round(r * squash)), 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    _soft_shadow(image, cov, (rng.uniform(-8, 8) * s, rng.uniform(4, 12) * s), 8 * s, 0.45)
    region = np.zeros((H, W), np.uint8)
    ha = rng.uniform(0, 360)
    hx, hy = cx + math.cos(math.radians(ha)) * r * 1.15, cy + math.sin(math.radians(ha)) * r * 1.15 * squash
    cv2.ellipse(image, (round(hx), round(hy)), (round(r * 0.35), round(r * 0.2)), ha, 0, 360, cup, round(wall * 1.6),
                cv2.LINE_AA)  # fmt: skip
    cv2.ellipse(region, (round(hx), round(hy)), (round(r * 0.35), round(r * 0.2)), ha, 0, 360, 255, round(wall * 1.6))
    cv2.ellipse(image, (round(cx), round(cy)), (round(r), round(r * squash)), 0, 0, 360, cup, -1, cv2.LINE_AA)
    cv2.ellipse(region, (round(cx), round(cy)), (round(r), round(r * squash)), 0, 0, 360, 255, -1)
    inner = (round(r - wall), round((r - wall) * squash))
    shade = tuple(int(c * 0.75) for c in cup)
    cv2.ellipse(image, (round(cx), round(cy + wall * 0.4)), inner, 0, 0, 360, shade, -1, cv2.LINE_AA)
    lr = (round((r - wall) * 0.92), round((r - wall) * 0.92 * squash))
    cv2.ellipse(image, (round(cx), round(cy + wall)), lr, 0, 0, 360, liquid, -1, cv2.LINE_AA)
    # highlight on the liquid and on the rim
    cv2.ellipse(image, (round(cx - r * 0.25), round(cy - r * 0.2)), (round(r * 0.18), round(r * 0.08)), -30, 0, 360,
                tuple(min(255, c + 60) for c in liquid), -1, cv2.LINE_AA)  # fmt: skip
    cv2.ellipse(image, (round(cx), round(cy)), (round(r - wall / 2), round((r - wall / 2) * squash)), 0, 200, 320,
                tuple(min(255, c + 40) for c in cup), max(1, round(wall / 3)), cv2.LINE_AA)  # fmt: skip
    mask |= region


def draw_score_sheet(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, centre: tuple[float, float],
                     angle_deg: float, px_per_mm: float) -> None:  # fmt: skip
    """A sheet of paper (A5/A6) with a ruled grid and handwritten scores: thin, slanted, blue/black ballpoint."""
    s = px_per_mm * 2  # draw at 2x then shrink for anti-aliasing
    w_mm, h_mm = (148, 210) if rng.random() < 0.5 else (105, 148)
    W, H = max(8, round(w_mm * s)), max(8, round(h_mm * s))
    paper = np.array(rng.choice([(245, 248, 250), (225, 240, 245), (235, 235, 230)]), np.float32)
    sheet = np.empty((H, W, 3), np.uint8)
    sheet[:] = paper.astype(np.uint8)
    grid = (200, 170, 150) if rng.random() < 0.5 else (170, 170, 170)
    cols = int(rng.integers(3, 6))
    row_h = rng.uniform(7, 10) * s
    for k in range(1, cols):
        x = round(W * k / cols)
        cv2.line(sheet, (x, round(row_h)), (x, H - 1), grid, max(1, round(0.3 * s)), cv2.LINE_AA)
    y = row_h
    while y < H:
        cv2.line(sheet, (0, round(y)), (W - 1, round(y)), grid, max(1, round(0.3 * s)), cv2.LINE_AA)
        y += row_h
    ink = tuple(int(v) for v in rng.choice([(140, 50, 20), (30, 30, 30), (40, 40, 150)]))
    n_rows = int((H - row_h) / row_h)
    for r_i in range(1, min(n_rows, int(rng.integers(3, 16)))):
        for c_i in range(cols):
            if rng.random() < 0.25:
                continue
            val = int(rng.integers(-80, 120))
            text = str(val)
            org = (round(W * c_i / cols + rng.uniform(2, 6) * s), round(row_h * (r_i + 1) - rng.uniform(1, 2.5) * s))
            font = int(rng.choice([cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX]))
            cv2.putText(sheet, text, org, font, row_h / 30 * rng.uniform(0.8, 1.0), ink, max(1, round(0.25 * s)),
                        cv2.LINE_AA)  # fmt: skip
    _paste_rotated(image, mask, sheet, centre, angle_deg, 0.5, radius_px=1,
                   rng=rng, s=px_per_mm)  # fmt: skip


def draw_pen(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, centre: tuple[float, float],
             angle_deg: float, px_per_mm: float) -> None:  # fmt: skip
    """A ballpoint pen (~140 x 9 mm) lying on the table: barrel with a highlight, clip and a cone tip."""
    s = px_per_mm
    length, width = rng.uniform(130, 150) * s, rng.uniform(7, 10) * s
    a = math.radians(angle_deg)
    u = np.array([math.cos(a), math.sin(a)], np.float32)
    n = np.array([-u[1], u[0]], np.float32)
    c = np.array(centre, np.float32)
    p0, p1 = c - u * length / 2, c + u * length * 0.4
    tip = c + u * length / 2
    barrel = np.array([p0 + n * width / 2, p1 + n * width / 2, p1 - n * width / 2, p0 - n * width / 2], np.float32)
    cone = np.array([p1 + n * width / 2, tip, p1 - n * width / 2], np.float32)
    colour = tuple(int(v) for v in rng.choice([(160, 60, 20), (30, 30, 30), (40, 40, 180), (230, 230, 230)]))
    H, W = mask.shape
    cov = _cover((H, W), [barrel, cone])
    _soft_shadow(image, cov, (2 * s, 3 * s), 2 * s, 0.4)
    region = np.zeros((H, W), np.uint8)
    _fill(image, region, barrel, colour)
    _fill(image, region, cone, (190, 190, 195))
    hl = tuple(min(255, v + 70) for v in colour)
    hl0, hl1 = np.round(p0 + n * width * 0.2).astype(int), np.round(p1 + n * width * 0.2).astype(int)
    cv2.line(image, tuple(hl0), tuple(hl1),
             hl, max(1, round(width * 0.12)), cv2.LINE_AA)  # fmt: skip
    clip = np.array([p0 + u * 5 * s + n * width * 0.15, p0 + u * 50 * s + n * width * 0.15,
                     p0 + u * 50 * s - n * width * 0.15, p0 + u * 5 * s - n * width * 0.15], np.float32)  # fmt: skip
    _fill(image, region, clip, (200, 200, 205))
    mask |= region
