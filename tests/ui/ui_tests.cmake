# include()d from tests/CMakeLists.txt (paths relative to tests/): the GUI tests and the screenshot / frame-time tool.
find_package(Qt6 REQUIRED COMPONENTS Widgets PrintSupport Test)
find_package(QCustomPlotQt6 REQUIRED)
set(MEMSCOPE_UI_TEST_LIBS memscope_ui Qt6::Widgets QCustomPlotQt6::QCustomPlotQt6)

memscope_add_test(tst_loader ui/tst_loader.cpp LIBS ${MEMSCOPE_UI_TEST_LIBS})
memscope_add_test(tst_main_window ui/tst_main_window.cpp LIBS ${MEMSCOPE_UI_TEST_LIBS})
memscope_add_test(tst_report_export ui/tst_report_export.cpp LIBS ${MEMSCOPE_UI_TEST_LIBS})
memscope_add_test(tst_timeline_lod ui/tst_timeline_lod.cpp LIBS ${MEMSCOPE_UI_TEST_LIBS})
memscope_add_test(tst_job_tab ui/tst_job_tab.cpp LIBS ${MEMSCOPE_UI_TEST_LIBS})
target_compile_definitions(tst_report_export PRIVATE
  MEMSCOPE_APP="$<$<TARGET_EXISTS:memscope>:$<TARGET_FILE:memscope>>")
if(TARGET memscope)
  add_dependencies(tst_report_export memscope)
endif()

add_executable(memscope_ui_tool ui/ui_tool.cpp)
set_target_properties(memscope_ui_tool PROPERTIES AUTOMOC ON AUTOMOC_COMPILER_PREDEFINES OFF)
target_link_libraries(memscope_ui_tool PRIVATE memscope_warnings memscope_core Qt6::Test ${MEMSCOPE_UI_TEST_LIBS})
