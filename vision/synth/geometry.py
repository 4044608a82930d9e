"""Camera and tile geometry for rendering: a pinhole camera with radial distortion over the table plane.

World coordinates are millimetres on the table: x to the right of seat 0, y away from seat 0, z up.
A tile is a box whose face (the side with the number) is its local +z side; the face's "up" (where the
digit's top points) is local +y. Labels are the projected face corners, so they are exact by construction:
the same projection draws the pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

TILE_WIDTH_MM = 27.0
TILE_HEIGHT_MM = 36.0
TILE_THICKNESS_MM = 7.0


@dataclass(frozen=True, slots=True)
class Camera:
    """A pinhole camera looking at the table, with two radial distortion coefficients (k1, k2)."""

    width: int
    height: int
    focal_px: float
    position: tuple[float, float, float]
    rotation: tuple[tuple[float, ...], ...]
    """World-to-camera rotation (rows: camera x right, y down, z forward in world coordinates)."""
    k1: float = 0.0
    k2: float = 0.0

    @classmethod
    def looking_at(
        cls,
        *,
        width: int,
        height: int,
        horizontal_fov_deg: float,
        position: tuple[float, float, float],
        target: tuple[float, float, float],
        roll_deg: float = 0.0,
        k1: float = 0.0,
        k2: float = 0.0,
        up: tuple[float, float, float] | None = None,
    ) -> Camera:
        """``up``: the world direction that points up in the image (a camera facing a standing rack: +z);
        None: away from seat 0 (world +y), as for a camera looking down at the table."""
        focal = (width / 2) / math.tan(math.radians(horizontal_fov_deg) / 2)
        forward = np.subtract(target, position).astype(float)
        forward /= np.linalg.norm(forward)
        # "Up" in the image is away from seat 0 (world +y) unless the camera looks straight down along it.
        world_up = np.array([0.0, 1.0, 0.0]) if abs(forward[1]) < 0.99 else np.array([0.0, 0.0, 1.0])
        if up is not None:
            world_up = np.asarray(up, float)
        right = np.cross(forward, world_up)
        if np.linalg.norm(right) < 1e-6:
            right = np.array([1.0, 0.0, 0.0])
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        roll = math.radians(roll_deg)
        right, down = right * math.cos(roll) + down * math.sin(roll), -right * math.sin(roll) + down * math.cos(roll)
        rotation = np.stack([right, down, forward])
        x, y, z = map(float, position)
        return cls(width, height, focal, (x, y, z), tuple(map(tuple, rotation)), k1, k2)

    @property
    def matrix(self) -> np.ndarray:
        return np.array([[self.focal_px, 0, self.width / 2], [0, self.focal_px, self.height / 2], [0, 0, 1.0]])

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, float) - np.asarray(self.position)) @ np.asarray(self.rotation).T

    def project(self, points: np.ndarray, *, distort: bool = True) -> np.ndarray:
        """World points (N, 3) to pixels (N, 2); points behind the camera come out as NaN."""
        cam = self.to_camera(points)
        z = cam[:, 2:3]
        with np.errstate(divide="ignore", invalid="ignore"):
            normalised = np.where(z > 1e-6, cam[:, :2] / z, np.nan)
        if distort and (self.k1 or self.k2):
            normalised = self._distort(normalised)
        return normalised * self.focal_px + np.array([self.width / 2, self.height / 2])

    def _distort(self, normalised: np.ndarray) -> np.ndarray:
        r2 = np.sum(normalised**2, axis=1, keepdims=True)
        return normalised * (1 + self.k1 * r2 + self.k2 * r2 * r2)

    def table_homography(self) -> np.ndarray:
        """Undistorted image of the plane z = 0: world (x, y) in mm -> pixels."""
        rotation = np.asarray(self.rotation)
        translation = -rotation @ np.asarray(self.position)
        return self.matrix @ np.column_stack([rotation[:, 0], rotation[:, 1], translation])

    def on_table(self, pixels: np.ndarray) -> np.ndarray:
        """Pixels (N, 2) to the points of the table plane z = 0 they show, in mm (N, 2): :meth:`project` undone
        (distortion by fixed-point iteration); NaN where the ray misses the table (above the horizon)."""
        centre = np.array([self.width / 2, self.height / 2])
        distorted = (np.asarray(pixels, float).reshape(-1, 2) - centre) / self.focal_px
        normalised = distorted
        for _ in range(20 if self.k1 or self.k2 else 0):
            r2 = np.sum(normalised**2, axis=1, keepdims=True)
            normalised = distorted / (1 + self.k1 * r2 + self.k2 * r2 * r2)
        pinhole = np.column_stack([normalised * self.focal_px + centre, np.ones(len(normalised))])
        world = np.linalg.solve(self.table_homography(), pinhole.T).T
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(world[:, 2:3] > 1e-12, world[:, :2] / world[:, 2:3], np.nan)

    def faces_camera(self, centre: np.ndarray, normal: np.ndarray) -> bool:
        return float(np.dot(np.asarray(self.position) - centre, normal)) > 0

    def distortion_maps(self, step: int = 16) -> tuple[np.ndarray, np.ndarray] | None:
        """Maps for cv2.remap turning an undistorted render into the distorted photo (None without distortion).

        For each distorted pixel we need where it comes from in the undistorted render: the inverse of
        :meth:`_distort`, found by fixed-point iteration on a coarse grid and resized (smooth, so exact enough).
        """
        if not (self.k1 or self.k2):
            return None
        xs = np.arange(0, self.width + step, step, dtype=float)
        ys = np.arange(0, self.height + step, step, dtype=float)
        grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
        centre = np.array([self.width / 2, self.height / 2])
        distorted = (grid - centre) / self.focal_px
        undistorted = distorted.copy()
        for _ in range(20):
            r2 = np.sum(undistorted**2, axis=1, keepdims=True)
            undistorted = distorted / (1 + self.k1 * r2 + self.k2 * r2 * r2)
        source = (undistorted * self.focal_px + centre).reshape(len(ys), len(xs), 2).astype(np.float32)
        # Interpolate the coarse grid at every pixel (grid point i sits at pixel i * step).
        gx, gy = np.meshgrid(
            np.arange(self.width, dtype=np.float32) / step, np.arange(self.height, dtype=np.float32) / step
        )
        map_x = cv2.remap(source[..., 0], gx, gy, interpolation=cv2.INTER_LINEAR)
        map_y = cv2.remap(source[..., 1], gx, gy, interpolation=cv2.INTER_LINEAR)
        return map_x, map_y

    def describe(self) -> dict[str, object]:
        tilt = math.degrees(math.acos(max(-1.0, min(1.0, -self.rotation[2][2]))))
        return {
            "width": self.width,
            "height": self.height,
            "focal_px": round(self.focal_px, 2),
            "position_mm": [round(v, 1) for v in self.position],
            "tilt_deg": round(tilt, 2),
            "k1": self.k1,
            "k2": self.k2,
        }


@dataclass(frozen=True, slots=True)
class TilePose:
    """Where a tile lies: the centre of its bottom on the table, the face's up direction, and a tilt.

    ``angle_deg`` turns the face's up (+y) counter-clockwise from world +y (0 = readable from seat 0).
    ``tilt_deg`` stands the tile up about its bottom edge (racks): 0 = flat, face up.
    ``face_up`` False lays it face down (the pool).
    """

    x: float
    y: float
    angle_deg: float
    z: float = 0.0
    tilt_deg: float = 0.0
    face_up: bool = True
    width: float = TILE_WIDTH_MM
    height: float = TILE_HEIGHT_MM
    thickness: float = TILE_THICKNESS_MM

    def rotation(self) -> np.ndarray:
        a = math.radians(self.angle_deg)
        spin = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1.0]])
        t = math.radians(self.tilt_deg)
        # Tilting raises the face's top edge: rotate about local x so +y goes towards +z.
        tilt = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])
        flip = np.diag([1.0, -1.0, -1.0]) if not self.face_up else np.eye(3)
        return spin @ tilt @ flip

    def corners(self) -> np.ndarray:
        """The 8 box corners in world mm: first the face (top-left, top-right, bottom-right, bottom-left
        as seen upright), then the back in the same order."""
        w, h, t = self.width / 2, self.height / 2, self.thickness
        local = np.array(
            [[-w, h, t], [w, h, t], [w, -h, t], [-w, -h, t], [-w, h, 0], [w, h, 0], [w, -h, 0], [-w, -h, 0]], float
        )
        if not self.face_up:
            local[:, 2] -= t  # the flip puts the back down: keep the box on the table
        placed = local @ self.rotation().T
        return placed + np.array([self.x, self.y, self.z])

    def face_points(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Points on the face at texture coordinates u (0 left..1 right), v (0 top..1 bottom)."""
        c = self.corners()
        top = c[0] + np.outer(u, c[1] - c[0])
        bottom = c[3] + np.outer(u, c[2] - c[3])
        return top + (bottom - top) * np.asarray(v)[:, None]

    def face_normal(self) -> np.ndarray:
        return self.rotation() @ np.array([0, 0, 1.0])

    def centre(self) -> np.ndarray:
        return self.corners()[:4].mean(axis=0)


def polygon_outline(camera: Camera, pose: TilePose, per_edge: int = 4) -> np.ndarray:
    """The face's outline in pixels, sampled along each edge so distortion's curvature is kept (N, 2)."""
    t = np.linspace(0, 1, per_edge, endpoint=False)
    one, zero = np.ones_like(t), np.zeros_like(t)
    u = np.concatenate([t, one, 1 - t, zero])
    v = np.concatenate([zero, t, one, 1 - t])
    return camera.project(pose.face_points(u, v))


def rotated_rect_corners(cx: float, cy: float, width: float, height: float, angle_deg: float) -> np.ndarray:
    a = math.radians(angle_deg)
    axis_x = np.array([math.cos(a), math.sin(a)])
    axis_y = np.array([-math.sin(a), math.cos(a)])
    return np.array(
        [
            [cx, cy] + sx * width / 2 * axis_x + sy * height / 2 * axis_y
            for sx, sy in ((-1, 1), (1, 1), (1, -1), (-1, -1))
        ]
    )
