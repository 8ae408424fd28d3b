"""ParaView (pvpython) script: the plane's sound field, coloured, saved as a PNG.

    pvpython examples/sphere_plane/show_plane.py sphere_plane_out/plane.vts plane.png \
             [spl_dB_re1|total_abs|scattered_abs|...] [sphere_plane_out/surface.vtu]

Colours the plane by the array (default spl_dB_re1, the total field's level in dB re the
incident wave's amplitude), points inside the body (NaN) in light grey, and shows the body's
surface from the optional .vtu. Written against paraview.simple; tested (ctest -L examples,
under xvfb-run) with Debian 12's ParaView 5.11.
"""
import sys

from paraview.simple import (ColorBy, GetActiveViewOrCreate, GetColorTransferFunction,
                             Render, SaveScreenshot, Show, XMLStructuredGridReader,
                             XMLUnstructuredGridReader)

if len(sys.argv) < 3:
    sys.exit(__doc__)
vts, png = sys.argv[1], sys.argv[2]
array = sys.argv[3] if len(sys.argv) > 3 else "spl_dB_re1"
surface = sys.argv[4] if len(sys.argv) > 4 else None

view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [1200, 1000]
view.OrientationAxesVisibility = 1

plane = XMLStructuredGridReader(FileName=[vts])
plane.PointArrayStatus = [array, "location"]
shown = Show(plane, view)
ColorBy(shown, ("POINTS", array))
lut = GetColorTransferFunction(array)
lut.ApplyPreset("Viridis (matplotlib)", True)
lut.NanColor = [0.85, 0.85, 0.85]  # inside the body: no value, by design
shown.RescaleTransferFunctionToDataRange(True, False)
shown.SetScalarBarVisibility(view, True)

if surface:
    body = XMLUnstructuredGridReader(FileName=[surface])
    body_shown = Show(body, view)
    # A solid colour: no array. Not ColorBy(body_shown, None), which 5.11 rejects ("invalid
    # association string 'NONE'") while the body is uncoloured.
    body_shown.ColorArrayName = ["POINTS", ""]
    body_shown.DiffuseColor = [0.6, 0.6, 0.6]
    body_shown.AmbientColor = [0.6, 0.6, 0.6]

# The plane is y = const (the x-z plane): look along +y with z up, the incident wave's
# direction (+z) pointing up the picture.
view.CameraPosition = [0.0, -12.0, 0.0]
view.CameraFocalPoint = [0.0, 0.0, 0.0]
view.CameraViewUp = [0.0, 0.0, 1.0]
view.ResetCamera()
Render(view)
SaveScreenshot(png, view, ImageResolution=[1200, 1000])
print("wrote", png)
