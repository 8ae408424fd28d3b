// sphere_two_ears.geo at element size h = 0.12.
// Regenerate: gmsh -2 meshes/sphere_two_ears_2.geo -o meshes/sphere_two_ears_2.msh -format msh41
h = 0.12;
Include "sphere_two_ears.geo";
