// Unit sphere centred at the origin, surface mesh only (about 5,400 triangles).
// Regenerate: gmsh -2 meshes/sphere.geo -o meshes/sphere.msh
// The nodes lie on the exact sphere: Gmsh places them through the CAD parametrisation.
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};

Mesh.MeshSizeMax = 0.075;  // edge length h: about 4 pi / (0.43 h^2) triangles
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
