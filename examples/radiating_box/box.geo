// A closed box 0.3 x 0.2 x 0.25 m centred on the origin, meshed with triangles on its surface.
// gmsh -2 box.geo -o box.msh            (MeshSizeMax 0.03: about 1100 triangles)
// gmsh -2 box.geo -setnumber size 0.06 -o box.msh   (coarser, for a quick run)
SetFactory("OpenCASCADE");
DefineConstant[ size = 0.03 ];
Box(1) = {-0.15, -0.1, -0.125, 0.3, 0.2, 0.25};
Mesh.MeshSizeMax = size;
Physical Surface("surface") = Surface{:};
