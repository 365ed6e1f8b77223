# include()d from tests/CMakeLists.txt (paths relative to tests/): the GUI tests and the screenshot / frame-time tool.
find_package(Qt6 REQUIRED COMPONENTS Widgets PrintSupport Test)
find_package(QCustomPlotQt6 REQUIRED)

# Each test links the ui parts it includes (ui/CMakeLists.txt).
memscope_add_test(tst_loader ui/tst_loader.cpp LIBS memscope_ui Qt6::Widgets)
# Its staged-loading test makes a 1M-event file with the generator (bench/, not in every build).
target_compile_definitions(tst_loader PRIVATE
  MEMSCOPE_GEN_SNAPSHOT="$<$<TARGET_EXISTS:memscope_gen_snapshot>:$<TARGET_FILE:memscope_gen_snapshot>>")
memscope_add_test(tst_main_window ui/tst_main_window.cpp
  LIBS memscope_ui memscope_ui_pages memscope_ui_plot memscope_ui_style Qt6::Widgets)
# Its staged-window tests open a generated 300k-event file (bench/'s generator, when built).
target_compile_definitions(tst_main_window PRIVATE
  MEMSCOPE_GEN_SNAPSHOT="$<$<TARGET_EXISTS:memscope_gen_snapshot>:$<TARGET_FILE:memscope_gen_snapshot>>")
memscope_add_test(tst_report_export ui/tst_report_export.cpp LIBS memscope_ui_pages Qt6::Widgets)
memscope_add_test(tst_ui_models ui/tst_ui_models.cpp LIBS memscope_ui_models memscope_ui_document Qt6::Gui)
memscope_add_test(tst_timeline_lod ui/tst_timeline_lod.cpp LIBS memscope_ui_plot Qt6::Widgets)
memscope_add_test(tst_job_tab ui/tst_job_tab.cpp
  LIBS memscope_ui memscope_ui_pages memscope_ui_models memscope_ui_plot Qt6::Widgets)

# The comparison tab (issue 15): its table model, plots, exports, and File > Compare / Ctrl+drop.
memscope_add_test(tst_comparison_view ui/tst_comparison_view.cpp
  LIBS memscope_ui memscope_ui_compare Qt6::Widgets)
target_compile_definitions(tst_report_export PRIVATE
  MEMSCOPE_APP="$<$<TARGET_EXISTS:memscope>:$<TARGET_FILE:memscope>>")
if(TARGET memscope)
  add_dependencies(tst_report_export memscope)
endif()

add_executable(memscope_ui_tool ui/ui_tool.cpp)
set_target_properties(memscope_ui_tool PROPERTIES AUTOMOC ON AUTOMOC_COMPILER_PREDEFINES OFF)
target_link_libraries(memscope_ui_tool PRIVATE memscope_warnings memscope_core Qt6::Test
  memscope_ui memscope_ui_pages memscope_ui_plot Qt6::Widgets)
