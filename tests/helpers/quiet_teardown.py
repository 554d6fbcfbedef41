"""Code a change's module may carry to quiet pytest's teardown errors in the test process, where the code under
test runs (gatk50, tcan50): what the teardown canary must catch."""

#: Every teardown error of the run swallowed, the hidden tests' own checks after their call among them (gatk50).
QUIET = ("import _pytest.runner as _runner\n\n"
         "_teardown = _runner.SetupState.teardown_exact\n\n\n"
         "def _quiet(self, nextitem):\n"
         "    try:\n"
         "        _teardown(self, nextitem)\n"
         "    except Exception:\n"
         "        pass\n\n\n"
         "_runner.SetupState.teardown_exact = _quiet\n\n\n")
#: The same one level down: each fixture's own teardown swallowed (a guard on ``teardown_exact`` would not see it).
QUIET_FINISH = ("import _pytest.fixtures as _fixtures\n\n"
                "_finish = _fixtures.FixtureDef.finish\n\n\n"
                "def _quiet(self, request):\n"
                "    try:\n"
                "        _finish(self, request)\n"
                "    except Exception:\n"
                "        pass\n\n\n"
                "_fixtures.FixtureDef.finish = _quiet\n\n\n")
