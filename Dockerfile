# tasksim as an image, built from source:
#   docker build --build-arg VERSION=v1.2.3 -t tasksim .
#   docker run --rm -p 7070:7070 tasksim serve --addr 0.0.0.0:7070 --allow-remote
# release/release_test.go runs the build stage's command outside Docker
# (this machine has no engine) and checks the binary it makes.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/tasksim/tasksim/internal/cli.Version=${VERSION}" -o /out/tasksim ./cmd/tasksim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tasksim /usr/local/bin/tasksim
EXPOSE 7070
ENTRYPOINT ["/usr/local/bin/tasksim"]
CMD ["serve", "--addr", "0.0.0.0:7070", "--allow-remote"]
