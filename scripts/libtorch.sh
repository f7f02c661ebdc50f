# Which LibTorch the rank program links: one switch, HARNESS_LIBTORCH, read by install-deps.sh,
# build.sh and test.sh (sourced, not run).
#
#   debian   Debian 12's libtorch-dev, LibTorch 1.13 (CPU, Gloo); the peer is Debian's
#            python3-torch (/usr/bin/python3). The default of install-deps.sh and build.sh.
#   pypi     PyPI's torch 2.11.0 (its CUDA 13.0 build, which also runs without a GPU; the
#            version the lent GPU machines carry), with torchvision for the peer, in a virtual
#            environment outside the clone ($HARNESS_CACHE, default ~/.cache/harness), so that
#            a fresh clone reuses it.
#   PATH     any other LibTorch: an unpacked LibTorch (PATH/share/cmake/Torch) or a Python
#            environment with torch installed (PATH/bin/python).
#
# libtorch_resolve sets LIBTORCH_NAME (a word for folder names), LIBTORCH_CMAKE_ARGS (an array)
# and LIBTORCH_BUILD_DIR (build/ for debian, build-<name>/ otherwise; HARNESS_BUILD_DIR
# overrides). The build derives the peer's Python from the LibTorch it finds (CMakeLists.txt,
# HARNESS_TORCH_PYTHON); `harness-rank version` names it.

HARNESS_PYPI_TORCH=2.11.0
HARNESS_PYPI_TORCHVISION=0.26.0

libtorch_venv() {
  echo "${HARNESS_CACHE:-$HOME/.cache/harness}/torch-$HARNESS_PYPI_TORCH"
}

# The torch package folder of a Python environment (its share/cmake holds TorchConfig.cmake).
libtorch_of_python() {
  "$1" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null
}

libtorch_resolve() {
  local choice=${HARNESS_LIBTORCH:-debian} torch_dir="" python=""
  LIBTORCH_CMAKE_ARGS=()
  case $choice in
    debian)
      LIBTORCH_NAME=debian
      ;;
    pypi)
      LIBTORCH_NAME=pypi
      python="$(libtorch_venv)/bin/python"
      ;;
    *)
      if [[ -d "$choice/share/cmake/Torch" ]]; then
        torch_dir=$choice
      elif [[ -x "$choice/bin/python" ]]; then
        python="$choice/bin/python"
      else
        echo "error: HARNESS_LIBTORCH=$choice: expected debian, pypi, a LibTorch folder" \
          "(with share/cmake/Torch) or a Python environment (with bin/python)" >&2
        return 2
      fi
      LIBTORCH_NAME=$(basename "$choice" | tr -c 'A-Za-z0-9._\n-' '_')
      ;;
  esac
  if [[ -n $python ]]; then
    torch_dir=$(libtorch_of_python "$python") || true
    if [[ -z $torch_dir ]]; then
      echo "error: HARNESS_LIBTORCH=$choice: $python has no torch" \
        "(HARNESS_LIBTORCH=$choice scripts/install-deps.sh installs it)" >&2
      return 2
    fi
  fi
  if [[ -n $torch_dir ]]; then
    LIBTORCH_CMAKE_ARGS=(-DCMAKE_PREFIX_PATH="$torch_dir")
  fi
  if [[ $LIBTORCH_NAME == debian ]]; then
    LIBTORCH_BUILD_DIR=${HARNESS_BUILD_DIR:-build}
  else
    LIBTORCH_BUILD_DIR=${HARNESS_BUILD_DIR:-build-$LIBTORCH_NAME}
  fi
}

# pypi: the virtual environment with the pinned torch and torchvision; quiet and quick when it
# is already there.
libtorch_install_pypi() {
  local venv
  venv=$(libtorch_venv)
  if "$venv/bin/python" -c "import torch, torchvision, sys
sys.exit(torch.__version__.split('+')[0] != '$HARNESS_PYPI_TORCH')" 2>/dev/null; then
    return 0
  fi
  echo "install-deps: torch $HARNESS_PYPI_TORCH from PyPI into $venv (about 4.6 GB)"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "torch==$HARNESS_PYPI_TORCH" "torchvision==$HARNESS_PYPI_TORCHVISION" numpy
}
