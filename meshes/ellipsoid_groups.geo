// Ellipsoid of semi-axes 1, 0.8, 0.6 (x, y, z) centred at the origin, cut by the planes
// z = 0.3 and z = -0.3 into the physical surfaces "top" (z > 0.3), "bottom" (z < -0.3) and
// "belt" (between), their edges meshed conformingly. Surface mesh only, about 2,500 triangles.
// Regenerate: gmsh -2 meshes/ellipsoid_groups.geo -o meshes/ellipsoid_groups.msh -format msh41
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};
Dilate {{0, 0, 0}, {1, 0.8, 0.6}} { Volume{1}; }
Disk(10) = {0, 0, 0.3, 2, 2};
Disk(11) = {0, 0, -0.3, 2, 2};
BooleanFragments{ Volume{1}; Delete; }{ Surface{10, 11}; Delete; }
// The body's outer surfaces (the disks left inside bound two pieces each: not among them, not
// saved), sorted by the middle of their bounding boxes (loose boxes:
// Gmsh gives the top z from 0 to 0.6, the belt -0.6 to 0.6).
t() = {};
b() = {};
belt() = {};
outer() = Abs(CombinedBoundary{ Volume{:}; });
For i In {0 : #outer() - 1}
  box() = BoundingBox Surface{outer(i)};
  If (box(2) + box(5) > 0.3)
    t() += outer(i);
  ElseIf (box(2) + box(5) < -0.3)
    b() += outer(i);
  Else
    belt() += outer(i);
  EndIf
EndFor
Physical Surface("top", 1) = t();
Physical Surface("bottom", 2) = b();
Physical Surface("belt", 3) = belt();

Mesh.MeshSizeMax = 0.09;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
