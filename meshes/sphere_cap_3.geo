// sphere_cap.geo at element size h = 0.06.
// Regenerate: gmsh -2 meshes/sphere_cap_3.geo -o meshes/sphere_cap_3.msh -format msh41
h = 0.06;
Include "sphere_cap.geo";
