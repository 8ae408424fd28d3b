// Unit sphere centred at the origin cut into the physical surfaces "cap" (the spherical cap
// theta < 30 degrees about +z, its edge the circle z = cos(30 deg) meshed conformingly: the
// cap is the exact geometric surface) and "rest". Surface mesh only. Element size h (set by
// sphere_cap_1/2/3.geo, each half the last): about 4 pi / (0.43 h^2) triangles.
// Regenerate: gmsh -2 meshes/sphere_cap_N.geo -o meshes/sphere_cap_N.msh -format msh41
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.12;
EndIf
Sphere(1) = {0, 0, 0, 1};
Disk(10) = {0, 0, Cos(30 * Pi / 180), 2, 2};
BooleanFragments{ Volume{1}; Delete; }{ Surface{10}; Delete; }
// The body's outer surfaces (the disk left inside bounds both pieces: not among them, not
// saved); the cap is the one above the plane.
cap() = {};
rest() = {};
outer() = Abs(CombinedBoundary{ Volume{:}; });
For i In {0 : #outer() - 1}
  box() = BoundingBox Surface{outer(i)};
  If (box(2) > 0.8)
    cap() += outer(i);
  Else
    rest() += outer(i);
  EndIf
EndFor
Physical Surface("cap", 1) = cap();
Physical Surface("rest", 2) = rest();

Mesh.MeshSizeMax = h;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
