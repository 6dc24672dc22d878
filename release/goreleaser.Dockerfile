# The image GoReleaser builds around the binary it already built.
FROM gcr.io/distroless/static-debian12:nonroot
COPY tasksim /usr/local/bin/tasksim
EXPOSE 7070
ENTRYPOINT ["/usr/local/bin/tasksim"]
CMD ["serve", "--addr", "0.0.0.0:7070", "--allow-remote"]
