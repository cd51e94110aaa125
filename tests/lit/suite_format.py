"""lit test format that keeps the tests of one suite (see lit.cfg.py): a module of its own so
that lit's worker processes can unpickle it."""

import copy
import shutil

import lit.formats
import lit.TestRunner


class SuiteTest(lit.formats.ShTest):
    """ShTest keeping the tests of ``suite``: ``"all"``, ``"fast"`` (files without
    ``REQUIRES: integration``) or ``"integration"`` (files with it).

    Cache folders: a fast test gets its own (``AUTOTUNE_EXPORT_CACHE_DIR`` is the test's
    ``%t.cache``, made afresh each run); the integration tests share the suite's
    (lit.cfg.py: ``Output/cache``), so that a kernel compiled by one is not compiled again
    by the next. Neither is the user's cache folder."""

    def __init__(self, suite: str, execute_external: bool = False):
        super().__init__(execute_external=execute_external)
        self.suite = suite

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig):
            with open(test.getSourcePath(), encoding="utf-8") as f:
                integration = "REQUIRES: integration" in f.read()
            if self.suite == "all" or (self.suite == "integration") == integration:
                yield test

    def execute(self, test, litConfig):
        if self.suite == "fast":
            _, tmp_base = lit.TestRunner.getTempPaths(test)
            shutil.rmtree(tmp_base + ".cache", ignore_errors=True)
            test.config = copy.copy(test.config)  # the suite's config is shared by every test
            test.config.environment = dict(test.config.environment, AUTOTUNE_EXPORT_CACHE_DIR=tmp_base + ".cache")
        return super().execute(test, litConfig)
