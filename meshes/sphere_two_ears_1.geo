// sphere_two_ears.geo at element size h = 0.24.
// Regenerate: gmsh -2 meshes/sphere_two_ears_1.geo -o meshes/sphere_two_ears_1.msh -format msh41
h = 0.24;
Include "sphere_two_ears.geo";
