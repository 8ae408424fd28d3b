// Unit sphere centred at the origin, surface mesh only, edge length h (a parameter):
// about 4 pi / (0.411 h^2) triangles. bench/paper_experiment.sh makes its in-between sizes with
//   gmsh -2 bench/meshes/sphere_h.geo -setnumber h H -o sphere.msh
// (binary MSH 4.1; the nodes lie on the exact sphere, placed through the CAD parametrisation).
SetFactory("OpenCASCADE");
DefineConstant[h = {0.075, Name "h"}];
Sphere(1) = {0, 0, 0, 1};

Mesh.MeshSizeMin = h;
Mesh.MeshSizeMax = h;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 1;
