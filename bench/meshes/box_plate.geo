// A head-sized body with a thin part (issue 14's stand-in for a head scan with its pinnae): a
// box 0.16 x 0.20 x 0.24 m with a plate 4 mm thin standing 55 mm out of one side, one closed
// surface (the union), edge length h (a parameter, metres; the plate's 4 mm faces get finer
// triangles). h = 0.006 gives about 17,000 triangles, the size of the issue's head mesh.
//   gmsh -2 bench/meshes/box_plate.geo -setnumber h 0.006 -format msh22 -o box_plate.msh
SetFactory("OpenCASCADE");
DefineConstant[h = {0.006, Name "h"}];
Box(1) = {-0.08, -0.10, -0.12, 0.16, 0.20, 0.24};
Box(2) = {0.075, -0.002, -0.025, 0.06, 0.004, 0.05};
BooleanUnion{ Volume{1}; Delete; }{ Volume{2}; Delete; }

Mesh.MeshSizeMin = h / 4;
Mesh.MeshSizeMax = h;
