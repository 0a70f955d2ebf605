"""Chapter 2's calculator on screen: ipywidgets controls where the front end can show them, a printed table
elsewhere (no ipywidgets, COURSE_WIDGETS=0, a terminal). Uses only the API that Colab's ipywidgets 7.7.1 and
Kaggle's 8.1.5 share (BoundedIntText, Dropdown, Button, Output, HBox/VBox, observe, on_click); installs nothing."""

from __future__ import annotations

import importlib.util

from helpers.live_view import live_display_available


def widgets_available() -> bool:
    return live_display_available() and importlib.util.find_spec("ipywidgets") is not None


def show(inputs: dict, predict, measure=None) -> dict:
    """Controls for `inputs` ({name: default int | (default, [choices])}); `predict(values)` returns what to show
    for the current values (redrawn on every change), `measure(values)` what a run on this runtime gives (on the
    button). Without widgets, prints predict(defaults). Returns the controls (empty without widgets)."""
    defaults = {name: spec[0] if isinstance(spec, tuple) else spec for name, spec in inputs.items()}
    if not widgets_available():
        print(predict(defaults))
        return {}
    import ipywidgets as widgets
    from IPython.display import display

    style = {"description_width": "initial"}
    controls = {name: widgets.Dropdown(options=spec[1], value=spec[0], description=name, style=style)
                if isinstance(spec, tuple) else
                widgets.BoundedIntText(value=spec, min=1, max=10**7, description=name, style=style)
                for name, spec in inputs.items()}
    predicted, measured = widgets.Output(), widgets.Output()

    def values():
        return {name: control.value for name, control in controls.items()}

    def redraw(_=None):
        predicted.clear_output(wait=True)
        with predicted:
            display(predict(values()))

    for control in controls.values():
        control.observe(redraw, names="value")
    rows = list(controls.values())
    parts = [widgets.HBox(rows[i:i + 3]) for i in range(0, len(rows), 3)] + [predicted]
    if measure is not None:
        button = widgets.Button(description="Measure here")

        def run(_):
            measured.clear_output(wait=True)
            with measured:
                print("running steps on this runtime...")
                try:
                    result = measure(values())
                except Exception as err:  # shown where the learner looks, not in the widgets' log
                    measured.clear_output(wait=True)
                    print(f"Measure here failed: {type(err).__name__}: {err}")
                    return
                measured.clear_output(wait=True)
                display(result)

        button.on_click(run)
        parts += [button, measured]
    display(widgets.VBox(parts))
    redraw()
    return controls
