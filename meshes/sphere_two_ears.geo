// Unit sphere centred at the origin with two "ears": the spherical caps of half-angle 20 degrees
// about +y ("left_ear") and -y ("right_ear"), their edges the circles y = +-cos(20 deg) meshed
// conformingly (each cap is the exact geometric surface, so the vibrating-cap series is exact
// for each ear alone), and "head" (the rest). Surface mesh only. Element size h (set by
// sphere_two_ears_1/2.geo, each half the last).
// Regenerate: gmsh -2 meshes/sphere_two_ears_N.geo -o meshes/sphere_two_ears_N.msh -format msh41
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.12;
EndIf
Sphere(1) = {0, 0, 0, 1};
Disk(10) = {0, 0, 0, 2, 2};
Rotate {{1, 0, 0}, {0, 0, 0}, Pi / 2} { Surface{10}; }
Translate {0, Cos(20 * Pi / 180), 0} { Surface{10}; }
Disk(11) = {0, 0, 0, 2, 2};
Rotate {{1, 0, 0}, {0, 0, 0}, Pi / 2} { Surface{11}; }
Translate {0, -Cos(20 * Pi / 180), 0} { Surface{11}; }
BooleanFragments{ Volume{1}; Delete; }{ Surface{10, 11}; Delete; }
// The body's outer surfaces (the disks left inside bound the pieces: not among them, not
// saved), sorted by where their bounding boxes lie in y.
left() = {};
right() = {};
head() = {};
outer() = Abs(CombinedBoundary{ Volume{:}; });
For i In {0 : #outer() - 1}
  box() = BoundingBox Surface{outer(i)};
  If (box(1) > 0.8)
    left() += outer(i);
  ElseIf (box(4) < -0.8)
    right() += outer(i);
  Else
    head() += outer(i);
  EndIf
EndFor
Physical Surface("left_ear", 1) = left();
Physical Surface("right_ear", 2) = right();
Physical Surface("head", 3) = head();

Mesh.MeshSizeMax = h;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
