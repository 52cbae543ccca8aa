def test_python_tests_run():
    assert 1 + 1 == 2
