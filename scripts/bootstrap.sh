#!/usr/bin/env bash
# Installs every Debian package npuscope needs, idempotently: `apt-get update` runs once (only when
# something is missing) and only missing packages are installed. Safe to run on every `make`.
#
#   bash scripts/bootstrap.sh           what build, test and demo need
#   bash scripts/bootstrap.sh --bench   plus the optional bench group (`make bench`)
#   bash scripts/bootstrap.sh --fuzz    plus clang and libFuzzer (`make fuzz`)
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config make git
  clang-format                 # the tree's .clang-format (make format; the format_check test)
  libopenblas-openmp-dev       # real BLAS for the emulator's GEMM / convolution (OpenMP build: see CMakeLists.txt)
  libsqlite3-dev               # trace store
  libboost-program-options-dev # CLI parsing
  nlohmann-json3-dev           # device spec files, JSON reports
  rapidjson-dev                # importer: streaming (SAX) JSON of real profiles, exact numbers
  zlib1g-dev                   # importer: .json.gz traces read as a stream
  libsimdjson-dev              # importer: the events of JSON traces, parsed fast (RapidJSON for the rest)
  libyaml-cpp-dev              # compare --mapping files in YAML
  libeigen3-dev                # npuscope calibrate --fit: Levenberg-Marquardt (header-only)
  libzstd-dev                  # compressed tensor dumps
  libgtest-dev libgmock-dev googletest  # tests
  libbenchmark-dev             # bench/
  libimgui-dev libglfw3-dev libgl-dev libstb-dev  # viewer (stb: PNG screenshots)
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata  # ONNX import + conformance data
  python3-onnx python3-numpy python3-protobuf  # sample model generation; the Perfetto export's Python test decodes with protobuf
  python3-torch libtorch-dev python3-torchvision  # the PyTorch device (pytorch/): libtorch-dev is only a Recommends
  libopenmpi-dev openmpi-bin   # many ranks: MPI carries C++ workloads' collectives (comm/) and scales out npuscope cluster
  pybind11-dev                 # the PyTorch "hccl" process group (pytorch/): c10d's ProcessGroup is a pybind11 class
  xvfb xauth libgl1-mesa-dri   # headless viewer tests (Mesa llvmpipe)
)

# Optional: only `make bench` asks for them.
BENCH_PACKAGES=()
# Optional: only `make fuzz` asks for them (libFuzzer comes with clang's runtime libraries).
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
for arg in "$@"; do
  case "$arg" in
    --bench) PACKAGES+=("${BENCH_PACKAGES[@]}") ;;
    --fuzz) PACKAGES+=("${FUZZ_PACKAGES[@]}") ;;
    *) echo "bootstrap: unknown option '$arg' (usage: bootstrap.sh [--bench] [--fuzz])" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
