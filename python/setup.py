"""Builds memscope._memscope with the project's own CMake build (python/CMakeLists.txt).

The core is the repository's C++ (this folder's parent). With MEMSCOPE_BUILD_DIR set to a
configured build tree (CI's `cli` build), that tree gains MEMSCOPE_BUILD_PYTHON=ON and only the
module is built against its libraries; otherwise a Qt-free build is made in build/cmake here.
MEMSCOPE_CMAKE_ARGS adds arguments to the configure step. Nothing is downloaded.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "core" / "CMakeLists.txt").exists():
            raise RuntimeError(f"memscope: {ROOT} is not the memscope repository (core/ is missing)")
        build_dir = os.environ.get("MEMSCOPE_BUILD_DIR")
        configure = ["cmake", "-S", str(ROOT), "-DMEMSCOPE_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
        if build_dir:
            build = Path(build_dir).resolve()
            configure += ["-B", str(build)]
        else:
            build = HERE / "build" / "cmake"
            configure += ["-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DMEMSCOPE_BUILD_UI=OFF",
                          "-DMEMSCOPE_BUILD_TESTS=OFF", "-DMEMSCOPE_BUILD_BENCH=OFF"]
            if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
                configure += ["-G", "Ninja"]
        try:  # pybind11 from a package index (an isolated build) is found through its module
            import pybind11

            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except (ImportError, AttributeError, RuntimeError):
            pass  # Debian's pybind11-dev: CMake finds it in /usr/lib/cmake
        configure += os.environ.get("MEMSCOPE_CMAKE_ARGS", "").split()
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "memscope_python", "-j", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "memscope" / f"_memscope{suffix}"
        if not built.exists():
            raise RuntimeError(f"memscope: the build made no {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


VERSION = (ROOT / "agent" / "memscope_agent" / "VERSION").read_text().split()[0]

setup(version=VERSION, ext_modules=[CMakeExtension("memscope._memscope")], cmdclass={"build_ext": CMakeBuild})
