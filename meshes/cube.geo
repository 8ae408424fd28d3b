// Cube of side 1 centred at the origin with sharp edges, surface mesh only
// (about 2,400 triangles). Saved in MSH 2.2 so that both file formats are exercised.
// Regenerate: gmsh -2 meshes/cube.geo -o meshes/cube.msh
SetFactory("OpenCASCADE");
Box(1) = {-0.5, -0.5, -0.5, 1, 1, 1};

Mesh.MeshSizeMax = 0.08;
Mesh.MshFileVersion = 2.2;
Mesh.Binary = 0;
