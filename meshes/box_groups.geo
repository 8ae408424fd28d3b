// The cube [-0.5, 0.5]^3 with the physical surfaces "lid" (the face z = +0.5), "floor"
// (z = -0.5) and "walls" (the four sides). Surface mesh only, about 2,000 triangles.
// Regenerate: gmsh -2 meshes/box_groups.geo -o meshes/box_groups.msh -format msh41
SetFactory("OpenCASCADE");
Box(1) = {-0.5, -0.5, -0.5, 1, 1, 1};
lid() = Surface In BoundingBox{-0.51, -0.51, 0.49, 0.51, 0.51, 0.51};
floor() = Surface In BoundingBox{-0.51, -0.51, -0.51, 0.51, 0.51, -0.49};
walls() = Abs(Boundary{ Volume{1}; });
walls() -= {lid(), floor()};
Physical Surface("lid", 1) = lid();
Physical Surface("floor", 2) = floor();
Physical Surface("walls", 3) = walls();

Mesh.MeshSizeMax = 0.08;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
