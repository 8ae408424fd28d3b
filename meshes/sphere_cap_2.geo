// sphere_cap.geo at element size h = 0.12.
// Regenerate: gmsh -2 meshes/sphere_cap_2.geo -o meshes/sphere_cap_2.msh -format msh41
h = 0.12;
Include "sphere_cap.geo";
