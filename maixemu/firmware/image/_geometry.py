"""Geometric corrections of ``image.Image``: ``lens_corr`` and ``rotation_corr`` ported from the
firmware's arithmetic, ``linpolar``/``logpolar`` as OpenCV approximations. In place; return the image.
"""

from __future__ import annotations

import math

import numpy as np

from . import _args


class GeometryMixin:
    def lens_corr(self, *args, **kwargs):
        """Barrel correction as ``imlib_lens_corr``: ``r = strength/diag * |p - c|``,
        ``theta = atan(r)/r`` (the firmware's polynomial atan), source ``c + int(theta * (p - c)/zoom)``,
        nearest, black outside."""
        from . import _fmath

        F = np.float32
        strength = F(_args.to_float(_args.pick(args, 0, kwargs, "strength", 1.8)))
        if not strength > F(0):
            raise OSError("Strength must be > 0!")
        zoom = F(_args.to_float(_args.pick(args, 1, kwargs, "zoom", 1.0)))
        if not zoom > F(0):
            raise OSError("Zoom must be > 0!")
        zoom = F(1.0) / zoom
        w, h = self.width(), self.height()
        hw, hh = w // 2, h // 2
        radius = strength / np.sqrt(F(w * w + h * h))
        yy, xx = np.mgrid[0:h, 0:w]
        nx, ny = xx - hw, yy - hh
        r = radius * np.sqrt((nx * nx + ny * ny).astype(F))
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = np.where(r < F(1e-7), F(1.0), _fmath.fast_atanf(r) / np.where(r == 0, F(1), r)).astype(F)
        sx = hw + np.trunc(theta * (nx.astype(F) * zoom)).astype(np.int64)
        sy = hh + np.trunc(theta * (ny.astype(F) * zoom)).astype(np.int64)
        ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        src = self._pix.copy()
        self._pix[...] = 0
        self._pix[ok] = src[sy[ok], sx[ok]]
        self._touch()
        return self

    def rotation_corr(self, *args, **kwargs):
        """3D rotation / translation / zoom with perspective, as ``imlib_rotation_corr`` does it:
        the 4x4 model ``A2 * T * (RX*RY*RZ) * A1`` (double precision), inverted, then every output
        pixel samples ``int(x'/z'), int(y'/z')`` of the original (nearest, black outside).
        ``corners=`` (4 points) adds the homography that maps the image corners onto them."""
        import math

        names = ("x_rotation", "y_rotation", "z_rotation", "x_translation", "y_translation", "zoom", "fov")
        defaults = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 60.0)
        vals = [float(np.float32(_args.to_float(_args.pick(args, i, kwargs, n, d))))
                for i, (n, d) in enumerate(zip(names, defaults))]
        xr, yr, zr, xt, yt, zoom, fov = vals
        corners = _args.pick(args, 7, kwargs, "corners", None)
        xr, yr, zr, fov = (float(np.float32(v * math.pi / 180)) for v in (xr, yr, zr, fov))
        if not zoom > 0:
            raise OSError("Zoom must be > 0!")
        if not (0 < fov < 180):
            raise OSError("FOV must be > 0 and < 180!")
        w, h = self.width(), self.height()
        F = np.float32
        z = float(F(F(np.sqrt(F(w * w + h * h))) / F(2)) / F(math.tan(float(F(fov / 2)))))
        z = float(F(z))
        z_z = float(F(z) * F(zoom))
        A1 = np.array([[1, 0, -(w // 2)], [0, 1, -(h // 2)], [0, 0, 0], [0, 0, 1]], float)
        cx, sx = float(F(math.cos(xr))), float(F(math.sin(xr)))
        cy, sy = float(F(math.cos(yr))), float(F(math.sin(yr)))
        cz, sz = float(F(math.cos(zr))), float(F(math.sin(zr)))
        RX = np.array([[1, 0, 0, 0], [0, cx, -sx, 0], [0, sx, cx, 0], [0, 0, 0, 1]], float)
        RY = np.array([[cy, 0, -sy, 0], [0, 1, 0, 0], [sy, 0, cy, 0], [0, 0, 0, 1]], float)
        RZ = np.array([[cz, -sz, 0, 0], [sz, cz, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], float)
        T = np.array([[1, 0, 0, xt], [0, 1, 0, yt], [0, 0, 1, z], [0, 0, 0, 1]], float)
        A2 = np.array([[z_z, 0, w // 2, 0], [0, z_z, h // 2, 0], [0, 0, 1, 0]], float)
        T3 = A2 @ (T @ ((RX @ RY @ RZ) @ A1))
        src = self._pix.copy()
        self._pix[...] = 0
        try:
            T4 = np.linalg.inv(T3)
        except np.linalg.LinAlgError:
            self._touch()
            return self
        if corners is not None:
            import cv2

            pts = [[_args.to_float(v) for v in _args.fixed_array(p, 2)] for p in _args.fixed_array(corners, 4)]
            Hm = cv2.getPerspectiveTransform(
                np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32), np.array(pts, np.float32))
            T4 = Hm @ T4
        M = T4.astype(F)
        yy, xx = np.mgrid[0:h, 0:w]
        xf, yf = xx.astype(F), yy.astype(F)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            X = M[0, 0] * xf + M[0, 1] * yf + M[0, 2]
            Y = M[1, 0] * xf + M[1, 1] * yf + M[1, 2]
            Z = M[2, 0] * xf + M[2, 1] * yf + M[2, 2]
            sxp = np.trunc(X / Z)
            syp = np.trunc(Y / Z)
        ok = np.isfinite(sxp) & np.isfinite(syp) & (sxp >= 0) & (sxp < w) & (syp >= 0) & (syp < h)
        self._pix[ok] = src[syp[ok].astype(np.int64), sxp[ok].astype(np.int64)]
        self._touch()
        return self

    def _polar(self, log: bool, reverse: bool):
        import cv2

        h, w = self.height(), self.width()
        center = (w / 2.0, h / 2.0)
        radius = math.hypot(w, h) / 2
        flags = cv2.INTER_NEAREST | (cv2.WARP_POLAR_LOG if log else cv2.WARP_POLAR_LINEAR)
        if reverse:
            flags |= cv2.WARP_INVERSE_MAP
        self._pix[...] = cv2.warpPolar(self._pix, (w, h), center, radius, flags)
        self._touch()
        return self

    def linpolar(self, *args, **kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        return self._polar(False, reverse)

    def logpolar(self, *args, **kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        return self._polar(True, reverse)
