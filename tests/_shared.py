"""Import-friendly access to ../shared for test modules that build parameter lists at collection time."""

from conftest import REPO_ROOT, SHARED_DIR, shared_path  # noqa: F401
