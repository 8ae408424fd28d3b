#!/usr/bin/env bash
# On a GPU machine, from the device bundle (nothing is built there): the GPU's near-field
# entries against the CPU's at the origin and 1e4 away (test_bem's Gpu* cases), and bem_solve
# on the GPU against the CPU for spheres of radius 1e-6, 1 and 1e6 (k R = 8). Logs in $OUT.
#   source .devrt/device-env && scripts/device_far_from_origin.sh
set -uo pipefail
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
test_bem --gtest_filter='Gpu*' > "$out/test_bem_gpu.log" 2>&1
echo "test_bem Gpu*: exit $? ($(grep -c '^\[       OK \]' "$out/test_bem_gpu.log") ok," \
     "$(grep -c '^\[  FAILED  \]' "$out/test_bem_gpu.log") failed lines)"
grep -E "FarFromTheOrigin|measured.*moved" "$out/test_bem_gpu.log" | head -8
printf '| radius | device | iterations | rel. L2 error | solve s | exit |\n|---|---|---|---|---|---|\n'
for radius in 1e-6 1 1e6; do
  k=$(awk "BEGIN { print 8 / $radius }")
  for device in cpu gpu; do
    log="$out/bem_${radius}_${device}.log"
    bem_solve -mesh "icosphere:5:$radius" -k "$k" -fmm_device "$device" > "$log" 2>&1
    rc=$?
    its=$(sed -n 's/.*solver *\([0-9]*\) iterations.*/\1/p' "$log")
    err=$(sed -n 's/.*relative L2 = \([^ ]*\).*/\1/p' "$log")
    solve=$(sed -n 's/.*solve \([0-9.]*\) s.*/\1/p' "$log")
    echo "| $radius | $device | $its | $err | $solve | $rc |"
  done
done
