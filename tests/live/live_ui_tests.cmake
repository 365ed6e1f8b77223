# include()d from tests/CMakeLists.txt when the UI is built: the live window against real --replay agents.
find_package(Qt6 REQUIRED COMPONENTS Widgets Test)
memscope_add_test(tst_live_window live/tst_live_window.cpp LIBS memscope_ui_live memscope_ui_plot Qt6::Widgets)
target_compile_definitions(tst_live_window PRIVATE MEMSCOPE_AGENT_DIR="${PROJECT_SOURCE_DIR}/agent")
