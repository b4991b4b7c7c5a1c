"""The tgc Python package: ``pip install ./python`` from a built checkout.

Offline by design: no build dependencies beyond Debian's python3-setuptools
(there is no pyproject.toml, so pip builds with the setuptools it finds
instead of fetching one), nothing to compile. The package bundles the build
tree's libtgc (``../build/libtgc.so.0``, or ``$TGC_LIBRARY``), so build tgc
first (``make build``)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def library():
    path = os.environ.get("TGC_LIBRARY") or os.path.join(HERE, "..", "build", "libtgc.so.0")
    if not os.path.exists(path):
        raise SystemExit("tgc: %s not found: build tgc first (make build), or set TGC_LIBRARY to libtgc.so.0" % path)
    return os.path.realpath(path)


class BuildPy(build_py):
    """Copies libtgc into the package, beside the modules that load it."""

    def run(self):
        super().run()
        shutil.copyfile(library(), os.path.join(self.build_lib, "tgc", "libtgc.so.0"))


class BinaryDistribution(Distribution):
    """A wheel for this platform: it carries a shared library."""

    def has_ext_modules(self):
        return True


setup(
    name="tgc",
    version="0.1.0",
    description="A multi-device graph compiler and partitioned executor: sessions and eager ops from Python",
    packages=["tgc"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
)
