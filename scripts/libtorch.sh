# shellcheck shell=bash
# Which LibTorch the rank program links: one switch, HARNESS_LIBTORCH, read by install-deps.sh,
# build.sh and test.sh (sourced, not run).
#
#   debian   Debian 12's libtorch-dev, LibTorch 1.13 (CPU, Gloo); the peer is Debian's
#            python3-torch (/usr/bin/python3). The default of install-deps.sh and build.sh.
#   pypi     PyPI's torch 2.11.0 (its CUDA 13.0 build, which also runs without a GPU; the
#            version the lent GPU machines carry), with torchvision for the peer, in a virtual
#            environment outside the clone ($HARNESS_CACHE, default ~/.cache/harness), so that
#            a fresh clone reuses it; and the CUDA toolkit its CMake configuration demands, from
#            PyPI too (libtorch_install_cuda_toolkit), so that no machine needs NVIDIA's own.
#   PATH     any other LibTorch: an unpacked LibTorch (PATH/share/cmake/Torch) or a Python
#            environment with torch installed (PATH/bin/python).
#
# libtorch_resolve sets LIBTORCH_NAME (a word for folder names), LIBTORCH_CMAKE_ARGS (an array),
# LIBTORCH_PREFIX (the folder its CMake package lies under), LIBTORCH_CUDA_TOOLKIT (pypi's CUDA
# toolkit, else empty) and LIBTORCH_BUILD_DIR (build/ for debian, build-<name>/ otherwise;
# HARNESS_BUILD_DIR overrides). The build derives the peer's Python from the LibTorch it finds
# (CMakeLists.txt, HARNESS_TORCH_PYTHON); `harness-rank version` names it.

HARNESS_PYPI_TORCH=2.11.0
HARNESS_PYPI_TORCHVISION=0.26.0
HARNESS_PYPI_DEEPSPEED=0.19.8

libtorch_venv() {
  echo "${HARNESS_CACHE:-$HOME/.cache/harness}/torch-$HARNESS_PYPI_TORCH"
}

# The torch package folder of a Python environment (its share/cmake holds TorchConfig.cmake),
# found without importing torch: PyPI's 2.11 takes 2.5 s of CPU to import, and the test command
# resolved it three times on its longest chain, once at idle priority beside the first pass.
libtorch_of_python() {
  "$1" -c 'import importlib.util, os, sys
spec = importlib.util.find_spec("torch")
if spec is None or spec.origin is None: sys.exit(1)
print(os.path.dirname(spec.origin))' 2>/dev/null
}

libtorch_resolve() {
  local choice=${HARNESS_LIBTORCH:-debian} torch_dir="" python=""
  LIBTORCH_CMAKE_ARGS=()
  LIBTORCH_CUDA_TOOLKIT=""
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
  # pypi builds against the toolkit in its virtual environment (libtorch_install_cuda_toolkit);
  # one from before that toolkit was installed builds with the machine's own.
  if [[ $choice == pypi ]]; then
    if [[ -f $(libtorch_venv)/cuda-toolkit/complete ]]; then
      LIBTORCH_CUDA_TOOLKIT=$(libtorch_venv)/cuda-toolkit
    elif ! command -v nvcc >/dev/null; then
      echo "error: HARNESS_LIBTORCH=pypi: no CUDA toolkit in $(libtorch_venv) nor nvcc on PATH" \
        "(HARNESS_LIBTORCH=pypi scripts/install-deps.sh installs it)" >&2
      return 2
    fi
  fi
  LIBTORCH_PREFIX=/usr/lib
  if [[ -n $torch_dir ]]; then
    LIBTORCH_CMAKE_ARGS=(-DCMAKE_PREFIX_PATH="$torch_dir")
    LIBTORCH_PREFIX=$torch_dir
  fi
  if [[ -n $LIBTORCH_CUDA_TOOLKIT ]]; then
    LIBTORCH_CMAKE_ARGS+=(-DCUDA_TOOLKIT_ROOT_DIR="$LIBTORCH_CUDA_TOOLKIT"
      -DCMAKE_CUDA_COMPILER="$LIBTORCH_CUDA_TOOLKIT/bin/nvcc")
  fi
  if [[ $LIBTORCH_NAME == debian ]]; then
    LIBTORCH_BUILD_DIR=${HARNESS_BUILD_DIR:-build}
  else
    LIBTORCH_BUILD_DIR=${HARNESS_BUILD_DIR:-build-$LIBTORCH_NAME}
  fi
}

# A build folder configured against another LibTorch or CUDA compiler than libtorch_resolve's is
# configured anew: find_package(Torch) keeps the Torch_DIR it cached whatever CMAKE_PREFIX_PATH
# now says, and CMake meets a new CMAKE_CUDA_COMPILER by deleting its cache and configuring again
# without the command line's CMAKE_PREFIX_PATH, that is, in build-pypi/, against Debian's LibTorch.
libtorch_forget_stale_configuration() {
  local dir=$1 cache=$1/CMakeCache.txt torch_dir cuda_compiler
  [[ -f $cache ]] || return 0
  torch_dir=$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$cache")
  cuda_compiler=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$cache")
  if [[ -n $torch_dir && $torch_dir != "$LIBTORCH_PREFIX"/* ]] || [[ -n $LIBTORCH_CUDA_TOOLKIT &&
    -n $cuda_compiler && $cuda_compiler != "$LIBTORCH_CUDA_TOOLKIT/bin/nvcc" ]]; then
    echo "build: $dir was configured against another LibTorch or CUDA compiler; configuring it anew"
    rm -rf "$cache" "$dir"/CMakeFiles/[0-9]*
  fi
}

# pypi: the virtual environment with the pinned torch and torchvision, and its CUDA toolkit;
# quiet and quick when they are already there.
libtorch_install_pypi() {
  local venv
  venv=$(libtorch_venv)
  # The installed versions from the packages' metadata, without importing them (2.5 s of CPU).
  if ! "$venv/bin/python" -c "import importlib.metadata as packages, sys
packages.version('torchvision')
sys.exit(packages.version('torch').split('+')[0] != '$HARNESS_PYPI_TORCH')" 2>/dev/null; then
    echo "install-deps: torch $HARNESS_PYPI_TORCH from PyPI into $venv (about 4.6 GB)"
    /usr/bin/python3 -m venv "$venv"
    libtorch_pip_install "$venv" \
      "torch==$HARNESS_PYPI_TORCH" "torchvision==$HARNESS_PYPI_TORCHVISION" numpy
  fi
  # DeepSpeed, the peer of the harness's ZeRO, runs on this torch (its sdist builds no ops).
  if ! "$venv/bin/python" -c "import importlib.metadata as packages, sys
sys.exit(packages.version('deepspeed') != '$HARNESS_PYPI_DEEPSPEED')" 2>/dev/null; then
    echo "install-deps: deepspeed $HARNESS_PYPI_DEEPSPEED from PyPI into $venv"
    libtorch_pip_install "$venv" "deepspeed==$HARNESS_PYPI_DEEPSPEED"
  fi
  libtorch_install_cuda_toolkit "$venv"
}

# The pinned Apache Otava (the change-point peer of harness history) in its own virtual
# environment, $HARNESS_CACHE/otava-$HARNESS_OTAVA; quiet when it is there.
HARNESS_OTAVA=0.8.0
otava_venv() {
  echo "${HARNESS_CACHE:-$HOME/.cache/harness}/otava-$HARNESS_OTAVA"
}
otava_install() {
  local venv
  venv=$(otava_venv)
  if ! "$venv/bin/python" -c "import importlib.metadata as packages, sys
sys.exit(packages.version('apache-otava') != '$HARNESS_OTAVA')" 2>/dev/null; then
    echo "install-deps: apache-otava $HARNESS_OTAVA from PyPI into $venv"
    /usr/bin/python3 -m venv "$venv"
    libtorch_pip_install "$venv" "apache-otava==$HARNESS_OTAVA"
  fi
}

# libtorch_pip_install VENV REQUIREMENT...: installs into VENV with uv (from PyPI, into VENV
# itself), else with VENV's pip. uv fetches the wheels in parallel and unpacks them natively:
# libtorch_install_pypi into an empty HARNESS_CACHE in about half of pip's CPU (docs/install.md),
# and test.sh runs this beside its first pass,
# where CPU is what is short. uv reads none of pip's configuration, so it gets
# pip's (libtorch_uv_options); a setting it has no counterpart for leaves the install to pip.
# uv's cache lies beside VENV (its files are hard links into VENV) and goes after.
libtorch_pip_install() {
  local venv=$1 cache status=0 uv_env=() uv_args=()
  shift
  local pip=("$venv/bin/pip" --disable-pip-version-check)
  if libtorch_uv_options "$venv" &&
    { [[ -x $venv/bin/uv ]] || "${pip[@]}" install --quiet uv >/dev/null 2>&1; }; then
    cache=$(dirname "$venv")/uv-cache
    env UV_CACHE_DIR="$cache" ${uv_env[@]+"${uv_env[@]}"} "$venv/bin/uv" pip install --quiet \
      --python "$venv/bin/python" ${uv_args[@]+"${uv_args[@]}"} "$@" || status=$?
    rm -rf "$cache"
    if ((status == 0)); then return 0; fi
    echo "install-deps: uv failed (exit $status); pip installs instead"
  fi
  "${pip[@]}" install --quiet "$@"
}

# Sets the caller's uv_env and uv_args to what pip's configuration says to `pip install`
# (`pip config list`: its files' [global] and [install] sections and its PIP_* variables, which
# win in that order, as in pip): its index, extra indexes, wheel folders, trusted hosts,
# certificate bundle, proxy and timeout. Fails on any other setting but the version check.
libtorch_uv_options() {
  local config line section key value values
  local -A settings=()
  config=$("$1/bin/pip" config list 2>/dev/null) || true
  for section in global install :env:; do
    while IFS= read -r line; do
      [[ $line == "$section".*=* ]] || continue
      key=${line%%=*} value=${line#*=}
      value=${value#\'} value=${value%\'}
      settings[${key#"$section".}]=$value
    done <<< "$config"
  done
  for key in "${!settings[@]}"; do
    value=${settings[$key]}
    read -r -a values <<< "$value"  # the settings that take several, whitespace-separated
    case $key in
      index-url) uv_args+=(--index-url "$value") ;;
      extra-index-url)
        for value in "${values[@]}"; do uv_args+=(--extra-index-url "$value"); done ;;
      find-links)  # a folder that is not there pip passes over (with a warning), uv refuses
        for value in "${values[@]}"; do
          if [[ $value == *://* || -e $value ]]; then uv_args+=(--find-links "$value"); fi
        done ;;
      trusted-host)
        for value in "${values[@]}"; do uv_args+=(--allow-insecure-host "$value"); done ;;
      no-index) if [[ ${value,,} =~ ^(1|true|yes|on)$ ]]; then uv_args+=(--no-index); fi ;;
      cert) uv_env+=("SSL_CERT_FILE=$value") ;;
      proxy) uv_env+=("HTTPS_PROXY=$value" "HTTP_PROXY=$value") ;;
      timeout | default-timeout) uv_env+=("UV_HTTP_TIMEOUT=${value%.*}") ;;
      disable-pip-version-check) ;;
      *)
        echo "install-deps: pip's setting $key has no uv counterpart here; pip installs"
        return 1 ;;
    esac
  done
}

# A CUDA build of LibTorch will not configure without a CUDA toolkit: its CMake package enables
# the CUDA language (a working nvcc) and finds the toolkit's headers and libraries, and the
# harness's GPU path includes NCCL's header. A fresh Debian 12 has none of it. PyPI has every
# piece as NVIDIA's wheels, at the versions torch itself pins (its cuda-toolkit requirement):
# the compiler (nvcc, crt, nvvm) and CCCL's headers are added to the virtual environment, and
# VENV/cuda-toolkit lays them out as a toolkit (bin, nvvm, targets/x86_64-linux/{include,lib},
# the headers and libraries of every nvidia/* wheel, NCCL's and cuDNN's among them, with the
# unversioned library names CMake looks for). Every machine then builds the PyPI pass against
# the same toolkit, whatever CUDA it has of its own, or none.
libtorch_install_cuda_toolkit() {
  local venv=$1 kit=$1/cuda-toolkit version nvidia cu package entry
  if [[ -f $kit/complete ]]; then return 0; fi
  version=$("$venv/bin/python" -c \
    'import importlib.metadata as m; print(m.version("cuda-toolkit"))')
  echo "install-deps: CUDA toolkit $version (nvcc, CCCL) from PyPI into $kit"
  if ! libtorch_pip_install "$venv" "cuda-toolkit[nvcc,crt,nvvm,cccl]==$version"; then
    # Offline beside a torch installed before: the machine's own toolkit, where it has one.
    if ! command -v nvcc >/dev/null; then
      echo "error: no CUDA toolkit from PyPI, nor nvcc on PATH: build-pypi/ cannot configure" >&2
      return 1
    fi
    echo "install-deps: no CUDA toolkit from PyPI; build-pypi/ builds with $(command -v nvcc)"
    return 0
  fi
  nvidia=$("$venv/bin/python" -c 'import nvidia; print(list(nvidia.__path__)[0])')
  cu=$(dirname "$(dirname "$(ls "$nvidia"/cu*/bin/nvcc)")")
  rm -rf "$kit"
  mkdir -p "$kit/bin" "$kit/targets/x86_64-linux/include" "$kit/targets/x86_64-linux/lib"
  ln -s "$cu"/bin/* "$kit/bin/"
  ln -s "$cu/nvvm" "$kit/nvvm"
  # The toolkit's own wheels first: a header two wheels ship is the toolkit's.
  for package in "$cu" "$nvidia"/*/; do
    package=${package%/}
    for entry in "$package"/include/* "$package"/lib/lib*.so* "$package"/lib/lib*.a; do
      [[ -e $entry ]] || continue
      case $entry in
        */include/*) ln -s "$entry" "$kit/targets/x86_64-linux/include/" 2>/dev/null || true ;;
        *) ln -s "$entry" "$kit/targets/x86_64-linux/lib/" 2>/dev/null || true ;;
      esac
    done
  done
  for entry in "$kit"/targets/x86_64-linux/lib/lib*.so.*; do
    ln -s "$(basename "$entry")" "${entry%%.so.*}.so" 2>/dev/null || true
  done
  ln -s targets/x86_64-linux/include "$kit/include"
  ln -s targets/x86_64-linux/lib "$kit/lib64"
  touch "$kit/complete"
}

