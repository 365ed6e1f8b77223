# include()d from tests/CMakeLists.txt (paths relative to tests/): the GUI tests.
find_package(Qt6 REQUIRED COMPONENTS Widgets PrintSupport Test)
find_package(QCustomPlotQt6 REQUIRED)

# Each test links the ui parts it includes (ui/CMakeLists.txt).
memscope_add_test(tst_loader ui/tst_loader.cpp LIBS memscope_ui Qt6::Widgets)
# Its staged-loading test makes a 1M-event file with the generator (tools/gen_snapshot).
target_compile_definitions(tst_loader PRIVATE MEMSCOPE_GEN_SNAPSHOT="$<TARGET_FILE:memscope_gen_snapshot>")
add_dependencies(tst_loader memscope_gen_snapshot)
memscope_add_test(tst_main_window ui/tst_main_window.cpp
  LIBS memscope_ui memscope_ui_pages memscope_ui_plot memscope_ui_style Qt6::Widgets)
# Its staged-window tests open a generated 300k-event file (tools/gen_snapshot).
target_compile_definitions(tst_main_window PRIVATE MEMSCOPE_GEN_SNAPSHOT="$<TARGET_FILE:memscope_gen_snapshot>")
add_dependencies(tst_main_window memscope_gen_snapshot)
memscope_add_test(tst_report_export ui/tst_report_export.cpp APP LIBS memscope_ui_pages Qt6::Widgets)
memscope_add_test(tst_ui_models ui/tst_ui_models.cpp LIBS memscope_ui_models memscope_ui_document memscope_ui_style Qt6::Gui)
memscope_add_test(tst_timeline_lod ui/tst_timeline_lod.cpp LIBS memscope_ui_plot Qt6::Widgets)
memscope_add_test(tst_job_tab ui/tst_job_tab.cpp
  LIBS memscope_ui memscope_ui_pages memscope_ui_models memscope_ui_plot Qt6::Widgets)

# The comparison tab (issue 15): its table model, plots, exports, and File > Compare / Ctrl+drop.
memscope_add_test(tst_comparison_view ui/tst_comparison_view.cpp
  LIBS memscope_ui memscope_ui_compare Qt6::Widgets)

# The panels of a snapshot's tab: diagnostics, estimator, the allocator what-if.
memscope_add_test(tst_diagnose_panels ui/tst_diagnose_panels.cpp LIBS memscope_ui_pages Qt6::Widgets)
memscope_add_test(tst_what_if_panel ui/tst_what_if_panel.cpp LIBS memscope_ui_pages Qt6::Widgets)

# Live: the live window and the job window against real --replay agents; File > Attach
# without blocking (the Python check and the injection as QProcesses, the script removed).
memscope_add_test(tst_live_tab ui/live/tst_live_tab.cpp AGENT LIBS memscope_ui memscope_ui_live memscope_ui_pages memscope_ui_plot Qt6::Widgets)
memscope_add_test(tst_live_job_window ui/live/tst_live_job_window.cpp AGENT
  LIBS memscope_ui_live memscope_ui_pages memscope_ui_models Qt6::Widgets)
memscope_add_test(tst_attach_dialog ui/live/tst_attach_dialog.cpp LIBS memscope_ui_live Qt6::Widgets)

# The runner: jobs' callbacks, cancel, errors, receivers gone.
memscope_add_test(tst_job_runner ui/tst_job_runner.cpp LIBS memscope_ui_runner)

# The flame graph (its model, the frame filter) and the range selection driving the panels (issue 29).
memscope_add_test(tst_flame_graph ui/tst_flame_graph.cpp LIBS memscope_ui_pages memscope_ui_models memscope_ui_plot Qt6::Widgets)
