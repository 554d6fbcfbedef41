"""How long the suite's longest tests take, for ordering them (tests/conftest.py): under ``-n 2`` the
longest start first and the short ones even out the end (longest-processing-time-first list
scheduling: the run ends at most one short test apart on the two workers, instead of a worker
starting a 40 s test when the other is nearly done).

Seconds of wall time (setup + call) of ``python -m pytest -n 2 -p no:randomly --durations=80`` on the
2-core machine, measured while other test runs shared it (so about twice their uncontended time):
only the order matters. A test not listed here (a new one, or a renamed one) keeps its place: a
``slow`` one after the listed ones, at :data:`DEFAULT_SLOW_S`. Update the table from ``--durations``
when the order changes a lot.

:data:`IDLE_S` lists the tests that mostly wait (a hang until its timeout, a sleep before a kill, a
time budget): they go first, before the long ones, while ``homefield demo`` runs in the background
(tests/conftest.py) and can use the cores they leave; later, two waiting tests side by side would leave
a core idle. Modelled on main's per-test table (processor sharing of 2 cores, xdist's one-ahead
scheduling, the demo as a 51 s background job): 320 s with the long tests first, 302 s with these first.

Measured with this order (speed30: one full ``-n 2`` run with ``-p benchmarks.suite_cpu``, then ``python
benchmarks/suite_cpu.py --timeline``, at a load of 8-17 from other users): the two workers ended 0.8 s apart
after 1,853 s of tests, with 7 s of gaps between tests each; replaying the measured walls longest first
instead of in this order would end 9 s (0.5%) sooner, the measured CPU seconds 1 s sooner. A second run (load
2-22): 0.0 s apart after 1,164 s, longest first 1.5 s sooner. The order has nothing left to give: only less
CPU makes the suite faster.
"""

from __future__ import annotations

__all__ = ["DEFAULT_SLOW_S", "IDLE_S", "KNOWN_S"]

#: Where an unlisted ``slow`` test sorts (s).
DEFAULT_SLOW_S = 8.0

KNOWN_S: dict[str, float] = {
    "tests/run/test_flaky.py::test_verify_records_what_the_oracle_fails_and_runs_leave_it_out": 69,
    "tests/run/test_lifetime.py::test_killed_run_leaves_no_process_no_temp_folder_and_resumes": 44,
    "tests/commands/test_verify_attacks.py::test_verify_attacks_on_a_real_repository": 40,  # 27 s of CPU at -n 2 inside
    "tests/run/test_shards.py::test_three_shards_merged_equal_one_run": 43,
    "tests/test_ci_example.py::test_the_workflow_merges_shards_and_fails_the_gate": 36,
    "tests/run/test_remote.py::test_two_remote_workers_and_one_local_then_kill_and_resume": 35,
    "tests/ablate/test_ablate_e2e.py::test_sigkill_at_n2_then_resume_loses_and_redoes_nothing": 35,
    "tests/run/test_bad_inputs.py::test_a_full_disk_stops_the_run_loses_nothing_and_resume_finishes": 34,
    "tests/run/test_run_limits.py::test_plan_and_verify": 33,
    "tests/test_templates.py::test_task_filter_template": 32,
    "tests/run/test_run_limits.py::test_sigkill_then_resume_loses_and_redoes_nothing": 32,
    "tests/test_readme.py::test_the_install_line_installs_this_package": 28,
    "tests/test_e2e.py::test_run_reference_agents_identically_at_n0_and_n2": 27,
    "tests/ablate/test_ablate_shards.py::test_three_ablation_shards_merged_equal_one_ablation": 27,
    "tests/run/test_bad_inputs.py::test_resume_checks_and_nothing_to_resume": 26,
    "tests/mine/test_reuse.py::test_sigkill_at_three_moments_then_the_same_command": 25,
    "tests/test_templates.py::test_venv_setup_template": 24,
    "tests/run/test_bad_inputs.py::test_a_rate_limit_stops_only_the_agents_behind_that_provider": 24,
    "tests/run/test_run_limits.py::test_rate_limit_stops_scheduling_and_resume_retries": 20,
    "tests/run/test_bad_inputs.py::test_report_refuses_one_agent_name_for_two_specs": 20,
    "tests/test_templates.py::test_junit_test_command_template": 17,
    "tests/test_templates.py::test_custom_agent_template": 16,
    "tests/run/test_bad_inputs.py::test_a_committed_homefield_folder_is_never_part_of_a_task_or_workspace": 16,
    "tests/mine/test_reuse.py::test_remining_runs_no_test_and_one_new_commit_verifies_one": 16,
    "tests/ablate/test_ablate_attempts.py::test_an_ablation_with_env_uv_grades_in_the_commits_environment[n0]": 16,
    "tests/test_templates.py::test_calc_repository_has_two_tasks": 15,
    "tests/run/test_run_limits.py::test_run_budget_stops_starting_attempts": 14,
    "tests/run/test_bad_inputs.py::test_run_options_are_checked_before_anything_is_spent": 14,
    "tests/run/test_bad_inputs.py::test_corrupt_task_records_are_refused_and_never_rewritten": 14,
    "tests/probe/test_probe_plugin.py::test_exclude_memorized_end_to_end": 13,
    "tests/test_e2e.py::test_fail_under_gate": 12,
    "tests/run/test_bad_inputs.py::test_per_test_timeout_is_test_timeout_even_without_plugin_autoload": 12,
    "tests/test_e2e.py::test_resume_runs_only_missing": 11,
    "tests/envs/test_mine_with_envs.py::test_dependency_changes_become_tasks_with_env_uv": 11,
    "tests/test_templates.py::test_custom_agent_maps_failures_to_outcomes": 10,
    "tests/test_e2e.py::test_select_with_k_and_collect_only": 10,
    "tests/test_e2e.py::test_resume_with_other_flags_is_an_error": 10,
    "tests/run/test_shards.py::test_run_gate_against_a_baseline_goes_into_junit": 10,
    "tests/mine/test_mine_shards.py::test_three_mining_shards_merged_equal_one_mine": 10,
    "tests/agents/test_predictions.py::test_predictions_graded_like_any_agent": 9,
    "tests/test_e2e.py::test_infra_error_is_one_line_not_a_traceback": 7,
    "tests/terminal/test_progress.py::test_mining_on_a_terminal_draws_one_live_status_line": 7,
    "tests/run/test_repo_config.py::test_the_repositorys_timeout_and_filterwarnings_do_not_reach_homefield_items": 7,
    "tests/run/test_attacks.py::test_cli_run_scores_attack_unsolved_and_committed_fix_solved": 7,
    "tests/probe/test_probe_shards.py::test_three_probe_shards_merged_equal_one_probe": 7,
    "tests/probe/test_probe_plugin.py::test_sigkill_then_resume_loses_and_redoes_nothing": 7,
    "tests/probe/test_probe_plugin.py::test_probe_flags_exactly_the_recited_tasks[2]": 7,
    "tests/ablate/test_ablate_attempts.py::test_the_sandbox_hook_wraps_every_agent_process_of_an_ablation[n0]": 7,
    "tests/test_transport.py::test_a_worker_report_carries_the_records_to_the_controller": 6,
    "tests/test_e2e.py::test_repo_tests_never_collected": 6,
    "tests/run/test_bad_inputs.py::test_mine_with_no_commits_leaves_nothing": 6,
    "tests/mine/test_redgreen.py::test_verify_a_target_that_cannot_be_addressed_runs_the_files": 6,
    "tests/envs/test_builder.py::test_three_workers_build_one_env_once": 6,
    "tests/ablate/test_ablate_attempts.py::test_an_ablation_with_env_uv_grades_in_the_commits_environment[n2]": 6,
}


#: Seconds a test waits (wall − CPU of the test and its children, from the per-test CPU table of main at
#: ``-n 2``, its first minute left out: there the demo shares the cores). Tests of ``demo_run`` are not
#: listed: they come after the demo; nor is a test whose timeout must outlast a CPU-bound step (the claude
#: CLI's timeout after its first turn, test_claude.py): under the demo's load that step misses it.
#: Only the order matters.
IDLE_S: dict[str, float] = {
    "tests/run/test_twin_confirm.py::test_a_flock_election_between_the_runs_is_never_excused": 17.3,
    "tests/mine/test_interrupt.py::test_time_budget_stops_verifications_in_flight[2-15]": 14.3,
    "tests/run/test_run_limits.py::test_sigkill_then_resume_loses_and_redoes_nothing": 6.6,
    "tests/terminal/test_progress.py::test_mining_on_a_terminal_draws_one_live_status_line": 2.3,  # 6.3 at 1.5 s setups
    "tests/mine/test_interrupt.py::test_time_budget_stops_verifications_in_flight[0-3]": 3.0,  # 6.0 at 6 s
    "tests/run/test_phase_lock.py::test_a_graded_test_process_cannot_reach_a_working_agent_through_flock[landlock]":
        3.5,  # 6.5 at an 8 s listen
    "tests/run/test_phase_lock.py::test_a_graded_test_process_cannot_reach_a_working_agent_through_flock[bwrap]":
        3.3,
    "tests/run/test_phase_lock.py::test_no_agent_works_while_another_attempt_is_graded": 3.0,  # 4.7 at a 2 s agent
    "tests/run/test_forgeries.py::test_the_runs_of_a_grading_start_together_so_none_is_first[0]": 2.4,
    "tests/run/test_forgeries.py::test_the_runs_of_a_grading_start_together_so_none_is_first[1]": 2.2,
    "tests/run/test_forgeries.py::test_the_runs_of_a_grading_start_together_so_none_is_first[2]": 2.3,
    "tests/mine/test_reuse.py::test_sigkill_at_three_moments_then_the_same_command": 5.6,
    "tests/agents/test_cmd_agent.py::test_timeout_kills_children_that_ignore_sigterm": 2.6,  # 4.4 at a 2 s grace
    "tests/mine/test_parent_bound.py::test_a_commit_that_fixes_a_hang_is_a_task": 4.3,
    "tests/mine/test_redgreen.py::test_verify_timeout": 1.7,  # 3.7 at a 2 s run timeout
    "tests/services/test_services_e2e.py::test_mine_again_at_n0_then_oracle_and_noop_at_n0_then_verify_at_n2": 3.1,
    "tests/run/test_lifetime.py::test_killed_run_leaves_no_process_no_temp_folder_and_resumes": 2.5,
    "tests/run/test_bad_inputs.py::test_per_test_timeout_is_test_timeout_even_without_plugin_autoload": 2.2,
    "tests/sandbox/test_procs.py::test_timeout_kills_a_descendant_that_left_the_group": 2.0,
    "tests/run/test_grading.py::test_a_wrong_fix_of_a_task_whose_parent_hangs_stops_at_the_tasks_bound": 1.8,
    # their control run waits 4 s for the untouched parent's hang
    "tests/run/test_grading.py::test_a_change_that_stops_the_tests_of_a_task_whose_parent_stops_them_is_scored"
    "[hang-exit-at-import]": 4.0,
    "tests/run/test_grading.py::test_a_change_that_stops_the_tests_of_a_task_whose_parent_stops_them_is_scored"
    "[hang-reporter-silenced]": 4.0,
    "tests/sandbox/test_testrun.py::test_timeouts": 1.75,
    "tests/run/test_repo_config.py::test_the_repositorys_timeout_and_filterwarnings_do_not_reach_homefield_items":
        1.5,
    "tests/mine/test_parent_bound.py::test_the_time_budget_cuts_a_verification_in_flight": 1.3,
    "tests/sandbox/test_procs.py::test_tree_dies_with_the_process_that_started_it[15]": 1.1,
    "tests/sandbox/test_procs.py::test_tree_dies_with_the_process_that_started_it[9]": 1.1,
    "tests/sandbox/test_procs.py::test_tree_dies_with_the_process_that_started_it[2]": 1.0,
    "tests/mine/test_redgreen.py::test_verify_setup_failed": 1.0,
    "tests/agents/test_cmd_agent.py::test_complete_failures_are_outcomes": 1.0,
    "tests/agents/test_openai_compat.py::test_slow_server_is_timeout": 1.0,
    "tests/agents/test_openai_compat.py::test_timeout": 1.0,
    "tests/services/test_services_units.py::test_a_service_never_ready_is_stopped_after_its_timeout": 1.0,
    "tests/sandbox/test_procs.py::test_timeout_kills_the_whole_tree": 1.0,
    "tests/sandbox/test_relay.py::test_host_relay_joins_a_socket_to_the_port": 1.0,
    "tests/sandbox/test_proxy.py::test_urllib_through_the_proxy": 1.0,
    "tests/sandbox/test_proxy.py::test_proxy_passes_listed_requests_and_refuses_the_rest": 1.0,
}

#: The tests that read the session's ``verify --attacks`` run (helpers.verify_attacks_run) are ``slow`` (the run
#: is) but take no time themselves: last of the long ones, long after the run's own test (listed above) started
#: it, so that no worker waits for the run on its file lock.
KNOWN_S.update({f"tests/run/test_sandbox_attacks.py::{test}[{name}]": 0.1 for test, names in (
    ("test_crash_at_import_is_scored", ("exit-at-import", "kill-at-import")),
    ("test_each_escape_family_is_caught", ("fifo-in-workspace", "stdout-flood", "sparse-gibibyte",
                                           "folder-swapped-for-link", "unreadable-workspace", "nested-json-stdout",
                                           "many-short-lines", "nested-folders", "long-path-writes")),
) for name in names})
