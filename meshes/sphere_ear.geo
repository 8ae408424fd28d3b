// Unit sphere centred at the origin with a small physical surface "left_ear" (the spherical cap
// of half-angle 10 degrees about +x, some 20 triangles) on the "skin" (the rest), and the
// enclosed volume as the physical volume "air" (a group of dimension 3, no elements: a condition
// naming it must be refused). Surface mesh only, about 2,500 triangles.
// Regenerate: gmsh -2 meshes/sphere_ear.geo -o meshes/sphere_ear.msh -format msh41
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};
// The plane x = cos(10 deg) cuts the sphere along the ear's edge: a disk, turned to face +x.
Disk(10) = {0, 0, 0, 2, 2};
Rotate {{0, 1, 0}, {0, 0, 0}, Pi / 2} { Surface{10}; }
Translate {Cos(10 * Pi / 180), 0, 0} { Surface{10}; }
BooleanFragments{ Volume{1}; Delete; }{ Surface{10}; Delete; }
// The body's outer surfaces (the disk left inside bounds both pieces: not among them, not
// saved); the ear is the one beyond the plane.
skin() = {};
ear() = {};
outer() = Abs(CombinedBoundary{ Volume{:}; });
For i In {0 : #outer() - 1}
  box() = BoundingBox Surface{outer(i)};
  If (box(0) > 0.9)
    ear() += outer(i);
  Else
    skin() += outer(i);
  EndIf
EndFor
Physical Surface("skin", 1) = skin();
Physical Surface("left_ear", 2) = ear();
Physical Volume("air", 3) = Volume{:};

Mesh.MeshSizeMax = 0.11;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
