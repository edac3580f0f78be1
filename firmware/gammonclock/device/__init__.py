"""The clock put together: the runtime with its panels, buttons, buzzer, dice reader and link to
the hall (`build`), the same in simulation and on the Pi; and `check-hardware` (`check`)."""
