#!/usr/bin/env python3
"""CTest driver of sphere_plane's picture: show_plane.py under xvfb-run on the small run's output.

    check_picture.py XVFB_RUN PVPYTHON WORK_DIR     (WORK_DIR: examples.sphere_plane's, which
                                                     holds plane.vts and surface.vtu)

Checks that the PNG is 1200 x 1000, that the plane shows its colour map and that the body is
drawn in front of it. Reads the PNG with matplotlib (this interpreter has it).
"""
import os
import subprocess
import sys

import matplotlib.image
import numpy

XVFB_RUN, PVPYTHON, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sphere_plane", "show_plane.py")
PNG = os.path.join(WORK, "plane.png")


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)
    print("ok:", msg)


if os.path.exists(PNG):
    os.remove(PNG)
command = [XVFB_RUN, "-a", PVPYTHON, SCRIPT, os.path.join(WORK, "plane.vts"), PNG, "spl_dB_re1",
           os.path.join(WORK, "surface.vtu")]
p = subprocess.run(command, capture_output=True, text=True, timeout=240)
# On a loaded machine xvfb-run's server is at times not ready when pvpython connects ("bad X
# server connection", then SIGABRT) or does not start ("Xvfb failed to start", no display): the
# virtual display's start, not the picture. Up to twice more.
X_FAILURES = ("bad X server connection", "Xvfb failed to start", "cannot open display",
              "Can't open display", "couldn't open display")
for _ in range(2):
    if p.returncode == 0 or not any(m in p.stdout + p.stderr for m in X_FAILURES):
        break
    p = subprocess.run(command, capture_output=True, text=True, timeout=240)
check(p.returncode == 0 and os.path.exists(PNG),
      f"show_plane.py under xvfb-run pvpython exits 0, writes plane.png\n{p.stdout}\n{p.stderr}")
img = matplotlib.image.imread(PNG)  # floats in [0, 1], rows x columns x RGB(A)
h, w = img.shape[:2]
check((w, h) == (1200, 1000), f"plane.png is 1200 x 1000 (got {w} x {h})")
spread = img[:, :, :3].max(axis=2) - img[:, :, :3].min(axis=2)
# Viridis's colours have max - min >= 0.27 (of 1); the lit grey body <= 0.04 (the light kit's
# warm tint, measured), so 0.06 parts them. The middle half of the picture is plane and body.
middle = (slice(h // 4, 3 * h // 4), slice(w // 4, 3 * w // 4))
coloured = spread[middle] > 0.06
distinct = len({tuple(c) for c in (255 * img[middle][coloured][:, :3]).round().astype(int)})
check(coloured.mean() > 0.6 and distinct > 200,
      f"the plane's colour map: {coloured.mean():.0%} of the middle half coloured (> 60%), "
      f"{distinct} distinct colours (> 200)")
# The body: grey at the centre, and shaded (the plane's NaN points, which it hides, are one
# flat grey: 5th to 95th percentile of brightness 0 there, 0.43 with the body, measured).
grey = img[middle][spread[middle] < 0.06][:, :3].mean(axis=1)
shading = numpy.percentile(grey, 95) - numpy.percentile(grey, 5) if grey.size else 0
centre = spread[h // 2 - 20:h // 2 + 20, w // 2 - 20:w // 2 + 20] < 0.06
check(centre.all() and shading > 0.2,
      f"the body: {centre.sum()} of the {centre.size} centre pixels grey, shading {shading:.2f} "
      f"(> 0.2)")
print("passed")
