"""lit test format that keeps the tests of one suite (see lit.cfg.py): a module of its own so
that lit's worker processes can unpickle it."""

import lit.formats


class SuiteTest(lit.formats.ShTest):
    """ShTest keeping the tests of ``suite``: ``"all"``, ``"fast"`` (files without
    ``REQUIRES: integration``) or ``"integration"`` (files with it)."""

    def __init__(self, suite: str, execute_external: bool = False):
        super().__init__(execute_external=execute_external)
        self.suite = suite

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig):
            with open(test.getSourcePath(), encoding="utf-8") as f:
                integration = "REQUIRES: integration" in f.read()
            if self.suite == "all" or (self.suite == "integration") == integration:
                yield test
