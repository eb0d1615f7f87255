#!/bin/bash
# The call (from the repository root, $OUT set, .whl/ carried).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
python3 docs/gpu-runs/2026-12-05_profile_check/check.py 2>&1 | tee $OUT/check.log
timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -n 0 tests/test_references.py tests/test_wgmma.py > $OUT/pytest_gpu.log 2>&1
echo "pytest rc=$?"; tail -4 $OUT/pytest_gpu.log
